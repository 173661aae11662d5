import LogbookJSON

/// The schema history of every event type: each type's current version and the upcasters
/// that bring older payloads to it. A type's current version is 1 plus the number of its
/// upcasters, so registering the step from version n to n + 1 is what makes n + 1 current.
///
/// Stores stamp every event they append with its type's current version and hand every
/// event they read back in the current shape, so nothing above a store ever sees an old
/// payload. Payloads already at the current version are returned untouched, byte for byte.
public struct EventEvolution: Sendable {
    private let steps: [String: [EventUpcaster]]
    /// Each type with upcasters, as UTF-8, and its current version: what `isCurrent` compares
    /// a stored type's bytes with, without making a `String`.
    private let versioned: [(name: [UInt8], current: Int)]

    /// - Precondition: each type's upcasters start at version 1 and follow one another
    ///   (1→2, 2→3, …) without gaps or repeats; breaking that is a programming error.
    public init(_ upcasters: [EventUpcaster]) {
        var steps: [String: [EventUpcaster]] = [:]
        for upcaster in upcasters.sorted(by: { ($0.type, $0.fromVersion) < ($1.type, $1.fromVersion) }) {
            let expected = (steps[upcaster.type]?.count ?? 0) + 1
            precondition(
                upcaster.fromVersion == expected,
                "upcasters of \(upcaster.type) must go 1→2, 2→3, …; found \(upcaster.fromVersion) where \(expected) belongs"
            )
            steps[upcaster.type, default: []].append(upcaster)
        }
        self.steps = steps
        versioned = steps.map { (Array($0.key.utf8), $0.value.count + 1) }
    }

    /// Logbook's own history (see docs/architecture.md, "Changing an event's shape"). Every
    /// type is at version 1, the shape ARCHITECTURE §4 and `schemas/` describe, except those
    /// that carry personal values (`PersonalFields`): at version 2 their values may be
    /// sealed (`{"sealed":…}`), and their email claims are on bucket streams; a version 1
    /// payload is the same shape in clear, read as it is.
    public static let standard = EventEvolution(
        PersonalFields.byType.keys.sorted().map { type in
            EventUpcaster(type: type, fromVersion: 1) { payload in payload }
        })

    /// The version that payloads of `type` are written under today.
    public func currentVersion(of type: String) -> Int {
        steps.isEmpty ? 1 : (steps[type]?.count ?? 0) + 1
    }

    /// True when a payload of the type named by the UTF-8 `type`, written under `version`,
    /// is in the current shape, so `upcast` would hand it back untouched. No `String` is made
    /// for the name.
    public func isCurrent(type: UnsafeBufferPointer<UInt8>, version: Int) -> Bool {
        for entry in versioned where entry.name.count == type.count && entry.name.elementsEqual(type) {
            return version == entry.current
        }
        return version == 1
    }

    /// `data`, written under `version` of `type`, in the current shape: unchanged when it
    /// is current, else parsed and passed through each later step in order.
    /// - Throws: when `version` is newer than this build knows (a newer Logbook wrote it),
    ///   below 1, or the payload is not what its version promises.
    public func upcast(type: String, version: Int, data: String) throws(EventUpcastError) -> String {
        let current = currentVersion(of: type)
        if version == current { return data }
        guard version >= 1 else { throw EventUpcastError(type: type, version: version, reason: "versions start at 1") }
        guard version < current else {
            throw EventUpcastError(
                type: type, version: version,
                reason: "this build knows versions up to \(current); a newer Logbook wrote it")
        }
        let parsed: JSONValue
        do {
            parsed = try JSONParser.parse(data)
        } catch {
            throw EventUpcastError(type: type, version: version, reason: "payload is not JSON: \(error)")
        }
        guard var payload = parsed.objectValue else {
            throw EventUpcastError(type: type, version: version, reason: "payload is not a JSON object")
        }
        for step in steps[type, default: []][(version - 1)...] {
            payload = try step.upcast(payload)
        }
        return JSONWriter.string(.object(payload))
    }
}
