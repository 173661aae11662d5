/// One stored event as borrowed views of its fields' UTF-8 bytes, in its type's current
/// shape: the same event `EventStore.read` returns as a `RecordedEvent`, without a `String`
/// made for each field. The views belong to whoever hands the value out (a database row, a
/// `RecordedEvent`) and are valid only during the call that hands it out: copy what you keep.
/// An empty field may have a null base address.
public struct StoredEventBytes {
    public var position: Int64
    public var eventId: UnsafeBufferPointer<UInt8>
    public var stream: UnsafeBufferPointer<UInt8>
    public var version: Int
    public var type: UnsafeBufferPointer<UInt8>
    /// The payload, already brought to its type's current shape.
    public var data: UnsafeBufferPointer<UInt8>
    public var commandId: UnsafeBufferPointer<UInt8>
    public var correlationId: UnsafeBufferPointer<UInt8>
    public var causationId: UnsafeBufferPointer<UInt8>
    /// Milliseconds since the Unix epoch, UTC.
    public var recordedAt: Int64

    public init(
        position: Int64, eventId: UnsafeBufferPointer<UInt8>, stream: UnsafeBufferPointer<UInt8>, version: Int,
        type: UnsafeBufferPointer<UInt8>, data: UnsafeBufferPointer<UInt8>, commandId: UnsafeBufferPointer<UInt8>,
        correlationId: UnsafeBufferPointer<UInt8>, causationId: UnsafeBufferPointer<UInt8>, recordedAt: Int64
    ) {
        self.position = position
        self.eventId = eventId
        self.stream = stream
        self.version = version
        self.type = type
        self.data = data
        self.commandId = commandId
        self.correlationId = correlationId
        self.causationId = causationId
        self.recordedAt = recordedAt
    }

    /// The event with each field copied into a `String` (bytes that are not UTF-8 repaired,
    /// as a store's `read` does).
    public var recordedEvent: RecordedEvent {
        RecordedEvent(
            position: position, eventId: Self.text(eventId), stream: Self.text(stream), version: version,
            type: Self.text(type), data: Self.text(data),
            metadata: EventMetadata(
                commandId: Self.text(commandId), correlationId: Self.text(correlationId),
                causationId: Self.text(causationId)),
            recordedAt: recordedAt)
    }

    /// The bytes as a `String`, invalid UTF-8 repaired.
    public static func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// Calls `body` with the bytes of `event`'s fields (its strings' own UTF-8 storage;
    /// a string without contiguous storage is copied first).
    public static func withBytes<Result, Failure: Error>(
        of event: RecordedEvent, _ body: (StoredEventBytes) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var eventId = event.eventId
        var stream = event.stream
        var type = event.type
        var data = event.data
        var commandId = event.metadata.commandId
        var correlationId = event.metadata.correlationId
        var causationId = event.metadata.causationId
        let result = eventId.withUTF8 { eventId in
            stream.withUTF8 { stream in
                type.withUTF8 { type in
                    data.withUTF8 { data in
                        commandId.withUTF8 { commandId in
                            correlationId.withUTF8 { correlationId in
                                causationId.withUTF8 { causationId in
                                    Swift.Result { () throws(Failure) in
                                        try body(
                                            StoredEventBytes(
                                                position: event.position, eventId: eventId, stream: stream,
                                                version: event.version, type: type, data: data, commandId: commandId,
                                                correlationId: correlationId, causationId: causationId,
                                                recordedAt: event.recordedAt))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return try result.get()
    }
}
