import LogbookCrypto

/// Seals and opens the personal values of one payload where they stand (the form
/// `PersonalFields` describes), writing the new payload in one pass into memory sized
/// beforehand: no buffer of its own for any value, and the payload's other bytes copied as
/// they are.
enum PayloadSealing {
    /// What opening does with a payload's sealed values.
    enum Opening {
        /// Opens them with their user's data key.
        case key(SecretKey)
        /// Writes `null` in their place and ends the payload in `"forgotten":true`.
        case forgotten
    }

    private static let null: [UInt8] = Array("null".utf8)

    /// `bytes` with every value of `layout` that is not `null` sealed under `key` and bound
    /// to `eventId` and its field.
    static func seal(
        _ bytes: UnsafeBufferPointer<UInt8>, layout: PersonalPayload, eventId: UnsafeBufferPointer<UInt8>,
        key: SecretKey, nonces: NonceSource
    ) -> String {
        let wrapping = PersonalFields.sealedPrefix.count + PersonalFields.sealedSuffix.count
        var capacity = bytes.count
        for index in 0..<layout.count {
            let value = layout[index].value
            capacity += wrapping + PublicBase64.encodedByteCount(Sealing.overhead + value.count) - value.count
        }
        return String(unsafeUninitializedCapacity: capacity) { out in
            var written = 0
            var copied = 0
            for index in 0..<layout.count {
                let (field, range) = layout[index]
                let value = UnsafeBufferPointer(rebasing: bytes[range])
                if null.withUnsafeBufferPointer({ PersonalPayload.equal($0, value) }) { continue }
                written = out.append(bytes[copied..<range.lowerBound], at: written)
                written = out.append(PersonalFields.sealedPrefix, at: written)
                let sealedCount = Sealing.overhead + value.count
                withUnsafeTemporaryAllocation(byteCount: sealedCount, alignment: 1) { sealed in
                    PersonalFields.withAssociatedData(eventId: eventId, field: field) { associatedData in
                        Sealing.seal(
                            UnsafeRawBufferPointer(value), key: key, associatedData: associatedData, nonces: nonces,
                            into: sealed)
                    }
                    // A ciphertext is not secret: no need for constant time.
                    written += PublicBase64.encode(
                        UnsafeRawBufferPointer(sealed), into: UnsafeMutableBufferPointer(rebasing: out[written...]))
                }
                written = out.append(PersonalFields.sealedSuffix, at: written)
                copied = range.upperBound
            }
            return out.append(bytes[copied...], at: written)
        }
    }

    /// Room enough for what `open` writes for a payload of `byteCount` bytes.
    static func openedCapacity(_ byteCount: Int) -> Int {
        byteCount + PersonalFields.forgottenEnding.count
    }

    /// Writes `bytes` into `out` (of `openedCapacity(bytes.count)`) with every sealed value
    /// of `layout` opened, or forgotten; answers how many bytes it wrote. A sealed value
    /// that is malformed or does not open under the key is an error naming the field.
    static func open(
        _ bytes: UnsafeBufferPointer<UInt8>, layout: PersonalPayload, eventId: UnsafeBufferPointer<UInt8>,
        opening: Opening, position: Int64, into out: UnsafeMutableBufferPointer<UInt8>
    ) throws(EventStoreError) -> Int {
        precondition(out.count >= openedCapacity(bytes.count), "no room for the opened payload")
        var written = 0
        var copied = 0
        for index in 0..<layout.count {
            let (field, range) = layout[index]
            guard let text = layout.sealedText(index).map({ UnsafeBufferPointer(rebasing: bytes[$0]) }) else {
                continue
            }
            written = out.append(bytes[copied..<range.lowerBound], at: written)
            copied = range.upperBound
            switch opening {
            case .forgotten:
                written = out.append(null, at: written)
            case .key(let key):
                written += try openValue(
                    text, field: field, eventId: eventId, key: key, position: position,
                    into: UnsafeMutableBufferPointer(rebasing: out[written...]))
            }
        }
        if case .forgotten = opening {
            written = out.append(bytes[copied..<(bytes.count - 1)], at: written)
            return out.append(PersonalFields.forgottenEnding, at: written)
        }
        return out.append(bytes[copied...], at: written)
    }

    /// Opens one sealed value's Base64 `text` into `out`; answers the plaintext's length.
    private static func openValue(
        _ text: UnsafeBufferPointer<UInt8>, field: PersonalField, eventId: UnsafeBufferPointer<UInt8>,
        key: SecretKey, position: Int64, into out: UnsafeMutableBufferPointer<UInt8>
    ) throws(EventStoreError) -> Int {
        func malformed() -> EventStoreError {
            .unreadableEvent(position: position, reason: "the sealed value of \(field.key) is malformed")
        }
        guard let capacity = PublicBase64.decodedByteCount(text.count) else { throw malformed() }
        let opened = withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 1) {
            decoded -> Result<Int, EventStoreError> in
            guard let count = PublicBase64.decode(text, into: decoded) else {
                return .failure(malformed())
            }
            let sealed = UnsafeRawBufferPointer(rebasing: decoded[..<count])
            return PersonalFields.withAssociatedData(eventId: eventId, field: field) { associatedData in
                do {
                    return .success(
                        try Sealing.open(
                            sealed, key: key, associatedData: associatedData, into: UnsafeMutableRawBufferPointer(out)))
                } catch {
                    return .failure(
                        .unreadableEvent(
                            position: position, reason: "the sealed value of \(field.key) does not open with its key"))
                }
            }
        }
        return try opened.get()
    }
}

extension UnsafeMutableBufferPointer<UInt8> {
    /// Copies `bytes` here from `index` on; answers the index after them.
    fileprivate func append(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, at index: Int) -> Int {
        append(UnsafeBufferPointer(rebasing: bytes), at: index)
    }

    /// Copies `bytes` here from `index` on; answers the index after them.
    fileprivate func append(_ bytes: [UInt8], at index: Int) -> Int {
        bytes.withUnsafeBufferPointer { append($0, at: index) }
    }

    /// Copies `bytes` here from `index` on; answers the index after them.
    fileprivate func append(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
        precondition(index + bytes.count <= count, "no room for the bytes")
        guard let source = bytes.baseAddress, let target = baseAddress else { return index }
        (target + index).update(from: source, count: bytes.count)
        return index + bytes.count
    }
}
