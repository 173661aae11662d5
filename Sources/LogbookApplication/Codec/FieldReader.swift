public import LogbookDomain
public import LogbookJSON

/// Reads the fields of a JSON object with precise `invalid_input` errors: a missing
/// required field, a field of the wrong JSON type, or a field nobody asked for each
/// name the field. `null` reads as absent.
public struct FieldReader: Sendable {
    public let object: JSONObject

    /// Refuses `value` unless it is an object whose keys are all in `allowed` (a short list:
    /// searched in order, nothing to hash or build per call).
    public init(_ value: JSONValue, allowed: [String], field: String = "data") throws(DomainError) {
        guard case .object(let object) = value else {
            throw .invalidInput(field: field, reason: "must be an object, got \(value.kindDescription)")
        }
        if let unknown = object.members.lazy.map(\.key).first(where: { !allowed.contains($0) }) {
            let known = allowed.sorted().joined(separator: ", ")
            throw .invalidInput(field: unknown, reason: "is not a known field (known: \(known))")
        }
        self.object = object
    }

    public func optionalString(_ key: String) throws(DomainError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let other?: throw .invalidInput(field: key, reason: "must be a string, got \(other.kindDescription)")
        }
    }

    public func string(_ key: String) throws(DomainError) -> String {
        guard let text = try optionalString(key) else { throw .invalidInput(field: key, reason: "is required") }
        return text
    }

    public func optionalInt(_ key: String) throws(DomainError) -> Int? {
        switch object[key] {
        case nil, .null?: return nil
        case .int(let number)?: return number
        case .double?: throw .invalidInput(field: key, reason: "must be a whole number")
        case let other?: throw .invalidInput(field: key, reason: "must be an integer, got \(other.kindDescription)")
        }
    }

    public func int(_ key: String) throws(DomainError) -> Int {
        guard let number = try optionalInt(key) else { throw .invalidInput(field: key, reason: "is required") }
        return number
    }

    /// A required string made into a domain value by `make(raw, field)`, which validates it.
    public func value<T>(_ key: String, _ make: (String, String) throws(DomainError) -> T) throws(DomainError) -> T {
        try make(try string(key), key)
    }

    /// An optional string made into a domain value by `make(raw, field)`.
    public func optionalValue<T>(_ key: String, _ make: (String, String) throws(DomainError) -> T)
        throws(DomainError) -> T?
    {
        guard let text = try optionalString(key) else { return nil }
        return try make(text, key)
    }

    /// A required integer made into a domain value by `make(number, field)`.
    public func value<T>(_ key: String, _ make: (Int, String) throws(DomainError) -> T) throws(DomainError) -> T {
        try make(try int(key), key)
    }

    /// An optional integer made into a domain value by `make(number, field)`.
    public func optionalValue<T>(_ key: String, _ make: (Int, String) throws(DomainError) -> T)
        throws(DomainError) -> T?
    {
        guard let number = try optionalInt(key) else { return nil }
        return try make(number, key)
    }
}
