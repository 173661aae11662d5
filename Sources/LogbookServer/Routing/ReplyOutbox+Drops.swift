import LogbookZMQ

extension ReplyOutbox {
    /// Sends `frames` as `send(_:on:)` does, and says in `diagnostics` (at debug level) when
    /// the reply was dropped: "`reply` dropped: the client is gone", or "… is not reading its
    /// replies".
    @discardableResult
    mutating func send(
        _ frames: [[UInt8]], on socket: borrowing ZMQSocket, reportingDropOf reply: String, to diagnostics: Diagnostics
    ) throws(ZMQError) -> Delivery {
        let delivery = try send(frames, on: socket)
        switch delivery {
        case .sent, .kept: break
        case .gone: diagnostics.debug("\(reply) dropped: the client is gone")
        case .overBudget: diagnostics.debug("\(reply) dropped: the client is not reading its replies")
        }
        return delivery
    }
}
