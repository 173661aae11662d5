/// A JSON document as a value. Objects keep their keys in insertion order, so what
/// the writer prints is stable from run to run; numbers keep integers exact.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// An integer literal that fits in `Int` (no fraction, no exponent).
    case int(Int)
    /// Any other number.
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The name of this value's JSON type, for error messages ("a string", "an integer").
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int: "an integer"
        case .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    public var intValue: Int? {
        if case .int(let value) = self { value } else { nil }
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    public var objectValue: JSONObject? {
        if case .object(let value) = self { value } else { nil }
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { value } else { nil }
    }
}

/// A JSON object: unique keys in insertion order. Small objects (the common case: every
/// envelope, request and payload) are searched linearly, which is cheaper than hashing
/// their keys; past `indexThreshold` members a key index keeps lookups constant-time.
public struct JSONObject: Sendable, Equatable, Sequence {
    public private(set) var members: [(key: String, value: JSONValue)] = []
    /// Empty until the object grows past `indexThreshold` members.
    private var indexByKey: [String: Int] = [:]

    static let indexThreshold = 16

    public init() {}

    public init(_ members: [(String, JSONValue)]) {
        self.members.reserveCapacity(members.count)
        for (key, value) in members { self[key] = value }
    }

    /// Makes room for `count` members, so that building an object of known size grows its storage once.
    public mutating func reserveCapacity(_ count: Int) {
        members.reserveCapacity(count)
    }

    public var keys: [String] { members.map(\.key) }
    public var count: Int { members.count }

    private func index(of key: String) -> Int? {
        if members.count > Self.indexThreshold { return indexByKey[key] }
        return members.firstIndex { $0.key == key }
    }

    /// The value for `key`; assigning `nil` removes the key, assigning a value to a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get { index(of: key).map { members[$0].value } }
        set {
            switch (index(of: key), newValue) {
            case (let index?, let value?):
                members[index].value = value
            case (let index?, nil):
                members.remove(at: index)
                rebuildIndex()
            case (nil, let value?):
                members.append((key, value))
                if members.count > Self.indexThreshold {
                    if indexByKey.isEmpty { rebuildIndex() } else { indexByKey[key] = members.count - 1 }
                }
            case (nil, nil):
                break
            }
        }
    }

    private mutating func rebuildIndex() {
        indexByKey.removeAll(keepingCapacity: true)
        guard members.count > Self.indexThreshold else { return }
        for (offset, member) in members.enumerated() { indexByKey[member.key] = offset }
    }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> {
        members.makeIterator()
    }

    /// Objects are equal when they hold the same keys with equal values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
    public init(nilLiteral: ()) { self = .null }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self.init(elements) }
}
