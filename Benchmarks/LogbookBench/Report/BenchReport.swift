public import LogbookJSON

/// The outcome of one bench run: every figure in the order measured, the machine it ran
/// on and how it was started. It renders as the table printed on stdout and as the JSON
/// document written to `--out`.
public struct BenchReport: Sendable, Equatable {
    public var figures: [BenchFigure]
    public var machine: MachineInfo
    /// The command line exactly as given, to reproduce the run.
    public var commandLine: String
    /// When the run started (RFC 3339, UTC).
    public var startedAt: String
    public var seconds: Double
    /// The settings the run used (sizes, clients, window).
    public var settings: JSONObject
    /// `/proc/loadavg` before and after the run: how busy the machine was.
    public var loadBefore: String
    public var loadAfter: String
    /// The share (percent) of the processors' time over the whole run that the host of this
    /// virtual machine took for other work (`/proc/stat` steal); nil where it cannot be read.
    /// Above a few percent, figures of this run are slowed unevenly: compare their ratios.
    public var stealPercent: Double?
    /// Steps that failed (each also has a row); the bench exits non-zero when there are any.
    public var failures: [String]

    public init(
        figures: [BenchFigure], machine: MachineInfo, commandLine: String, startedAt: String, seconds: Double,
        settings: JSONObject, loadBefore: String, loadAfter: String, stealPercent: Double? = nil,
        failures: [String] = []
    ) {
        self.figures = figures
        self.machine = machine
        self.commandLine = commandLine
        self.startedAt = startedAt
        self.seconds = seconds
        self.settings = settings
        self.loadBefore = loadBefore
        self.loadAfter = loadAfter
        self.stealPercent = stealPercent
        self.failures = failures
    }

    /// The whole report as one JSON value.
    public var json: JSONValue {
        [
            "commandLine": .string(commandLine),
            "startedAt": .string(startedAt),
            "seconds": .double(Self.rounded(seconds)),
            "machine": machine.json,
            "loadAverage": ["before": .string(loadBefore), "after": .string(loadAfter)],
            "machineStealPercent": stealPercent.map { .double(Self.rounded($0)) } ?? .null,
            "settings": .object(settings),
            "figures": .array(figures.map(Self.json)),
            "failures": .array(failures.map(JSONValue.string)),
        ]
    }

    /// The report as the text table printed on stdout.
    public var tableText: String {
        ReportTable.text(self)
    }

    /// The JSON document as text: the top levels one member a line, each figure on one line.
    public var jsonText: String {
        PrettyJSON.text(json, expandedLevels: 2)
    }

    static func json(_ figure: BenchFigure) -> JSONValue {
        var object: JSONObject = [
            "section": .string(figure.section), "name": .string(figure.name),
            "value": figure.value.map { .double(rounded($0)) } ?? .null, "unit": .string(figure.unit.rawValue),
        ]
        object["baselines"] = .array(
            figure.baselines.map { baseline in
                [
                    "name": .string(baseline.name), "value": .double(rounded(baseline.value)),
                    "ratio": figure.ratio(to: baseline).map { .double(rounded($0)) } ?? .null,
                ]
            })
        if let target = figure.target {
            object["target"] = [
                "bound": .string(target.bound.rawValue), "threshold": .double(rounded(target.threshold)),
                "text": .string(target.text),
            ]
            object["met"] = figure.met.map(JSONValue.bool) ?? .null
        }
        if let note = figure.note { object["note"] = .string(note) }
        if figure.details.count > 0 { object["details"] = roundedNumbers(.object(figure.details)) }
        return .object(object)
    }

    /// The same value with every fractional number rounded to four decimals.
    static func roundedNumbers(_ value: JSONValue) -> JSONValue {
        switch value {
        case .double(let number): .double(rounded(number))
        case .array(let items): .array(items.map(roundedNumbers))
        case .object(let object): .object(JSONObject(object.members.map { ($0.key, roundedNumbers($0.value)) }))
        default: value
        }
    }

    /// Four decimals are plenty for any figure here and keep the file readable.
    static func rounded(_ value: Double) -> Double {
        guard value.isFinite else { return 0 }
        return (value * 10_000).rounded() / 10_000
    }
}

/// Writes JSON with its first levels one member a line and deeper values compact.
enum PrettyJSON {
    static func text(_ value: JSONValue, expandedLevels: Int) -> String {
        var output = ""
        write(value, level: 0, expandedLevels: expandedLevels, into: &output)
        return output + "\n"
    }

    private static func write(_ value: JSONValue, level: Int, expandedLevels: Int, into output: inout String) {
        let inner = String(repeating: "  ", count: level + 1)
        let outer = String(repeating: "  ", count: level)
        switch value {
        case .object(let object) where level < expandedLevels && object.count > 0:
            output += "{\n"
            for (index, member) in object.members.enumerated() {
                output += inner + JSONWriter.string(.string(member.key)) + ": "
                write(member.value, level: level + 1, expandedLevels: expandedLevels, into: &output)
                output += index < object.count - 1 ? ",\n" : "\n"
            }
            output += outer + "}"
        case .array(let items) where level < expandedLevels && !items.isEmpty:
            output += "[\n"
            for (index, item) in items.enumerated() {
                output += inner
                write(item, level: level + 1, expandedLevels: expandedLevels, into: &output)
                output += index < items.count - 1 ? ",\n" : "\n"
            }
            output += outer + "]"
        default:
            output += JSONWriter.string(value)
        }
    }
}
