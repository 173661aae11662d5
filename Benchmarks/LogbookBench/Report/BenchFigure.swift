public import LogbookJSON

/// One measured figure of the bench, with what it is compared with: the baselines measured
/// in the same run (each with its ratio, figure ÷ baseline) and the target the issue sets.
/// A figure that could not be measured carries no value, only a note saying why.
public struct BenchFigure: Sendable, Equatable {
    /// What a value counts; the table and the JSON print it with the value.
    public enum Unit: String, Sendable, Equatable {
        case perSecond = "/s"
        case microseconds = "µs"
        case megabytes = "MB"
        case seconds = "s"
        /// A share of something (wall time, commands), 0 to 100.
        case percent = "%"
    }

    /// A figure measured in the same run on the same machine with the same unit, to read
    /// the figure against.
    public struct Baseline: Sendable, Equatable {
        public var name: String
        public var value: Double

        public init(_ name: String, _ value: Double) {
            self.name = name
            self.value = value
        }
    }

    /// What the issue asks of the figure.
    public struct Target: Sendable, Equatable {
        public enum Bound: String, Sendable, Equatable {
            case atLeast, atMost
        }

        public var bound: Bound
        public var threshold: Double
        /// How the target reads in the table ("≥ 30,000/s", "≤ 3 × round trip + fsync").
        public var text: String

        public init(_ bound: Bound, _ threshold: Double, _ text: String) {
            self.bound = bound
            self.threshold = threshold
            self.text = text
        }

        public func isMet(by value: Double) -> Bool {
            switch bound {
            case .atLeast: value >= threshold
            case .atMost: value <= threshold
            }
        }
    }

    public var section: String
    public var name: String
    public var value: Double?
    public var unit: Unit
    public var baselines: [Baseline]
    public var target: Target?
    /// Why there is no value, or what to keep in mind reading it.
    public var note: String?
    /// Context measured with the figure (batch sizes, rejections, sample counts).
    public var details: JSONObject

    public init(
        section: String, name: String, value: Double?, unit: Unit, baselines: [Baseline] = [], target: Target? = nil,
        note: String? = nil, details: JSONObject = [:]
    ) {
        self.section = section
        self.name = name
        self.value = value
        self.unit = unit
        self.baselines = baselines
        self.target = target
        self.note = note
        self.details = details
    }

    /// A row saying a figure was not measured, and why.
    public static func skipped(section: String, name: String, unit: Unit, because reason: String) -> BenchFigure {
        BenchFigure(section: section, name: name, value: nil, unit: unit, note: "skipped: \(reason)")
    }

    /// The figure divided by a baseline; nil without a value or for a zero baseline.
    public func ratio(to baseline: Baseline) -> Double? {
        guard let value, baseline.value != 0 else { return nil }
        return value / baseline.value
    }

    /// Whether the value meets the target; nil when there is no target or no value.
    public var met: Bool? {
        guard let target, let value else { return nil }
        return target.isMet(by: value)
    }
}
