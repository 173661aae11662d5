import LogbookJSON

/// Reads one closed object of a `Status` document: a field nobody asks for, a missing one
/// or one of the wrong JSON type is a `StatusDocumentError` naming the field's path.
struct StatusFields {
    let object: JSONObject
    let path: String

    /// Refuses `value` unless it is an object whose keys are all in `allowed`.
    init(_ value: JSONValue?, at path: String, allowed: [String]) throws(StatusDocumentError) {
        guard case .object(let object)? = value else {
            throw StatusDocumentError(field: path, "must be an object, got \(value?.kindDescription ?? "nothing")")
        }
        if let unknown = object.keys.first(where: { !allowed.contains($0) }) {
            throw StatusDocumentError(field: Self.joined(path, unknown), "is not a field of this object")
        }
        self.object = object
        self.path = path
    }

    /// An object field, read with its own allowed keys.
    func object(_ key: String, allowed: [String]) throws(StatusDocumentError) -> StatusFields {
        try StatusFields(try value(key), at: name(key), allowed: allowed)
    }

    func has(_ key: String) -> Bool { object[key] != nil }

    func int(_ key: String) throws(StatusDocumentError) -> Int {
        guard case .int(let number) = try value(key) else { throw mistyped(key, "an integer") }
        return number
    }

    /// An integer or `null`.
    func optionalInt(_ key: String) throws(StatusDocumentError) -> Int? {
        switch try value(key) {
        case .null: return nil
        case .int(let number): return number
        default: throw mistyped(key, "an integer or null")
        }
    }

    func number(_ key: String) throws(StatusDocumentError) -> Double {
        switch try value(key) {
        case .double(let number): return number
        case .int(let number): return Double(number)
        default: throw mistyped(key, "a number")
        }
    }

    func string(_ key: String) throws(StatusDocumentError) -> String {
        guard case .string(let text) = try value(key) else { throw mistyped(key, "a string") }
        return text
    }

    /// Refuses the object unless `key` holds exactly the string `expected` (`role`, `state`).
    func constant(_ key: String, _ expected: String) throws(StatusDocumentError) {
        let found = try string(key)
        guard found == expected else {
            throw StatusDocumentError(field: name(key), "must be \"\(expected)\", got \"\(found)\"")
        }
    }

    /// The field's value, whatever its type.
    func value(_ key: String) throws(StatusDocumentError) -> JSONValue {
        guard let value = object[key] else { throw StatusDocumentError(field: name(key), "is required") }
        return value
    }

    private func mistyped(_ key: String, _ expected: String) -> StatusDocumentError {
        StatusDocumentError(field: name(key), "must be \(expected), got \(object[key]?.kindDescription ?? "nothing")")
    }

    private func name(_ key: String) -> String { Self.joined(path, key) }

    /// `key` under `path`, as the errors name it.
    private static func joined(_ path: String, _ key: String) -> String { "\(path).\(key)" }
}
