import LogbookDomain

/// Re-checks a log event by event, independently of the deciders that wrote it, and
/// reports every place where it breaks a promise of the service:
/// - positions 1, 2, 3 … without holes, and versions 1, 2, 3 … per stream;
/// - every event readable, on its own stream;
/// - users, posts and products created once and changed only while live; authors and
///   buyers live;
/// - stock figures that follow from the ones before and never go negative;
/// - every purchase followed at once by its order (same ids and quantity, in the same
///   command), at the product's price, with an exact total; an order id used once;
/// - no address claimed twice or released by someone else; no two live users with one address.
///
/// It reads events only: command records are guarded by the database itself. Memory grows
/// with the number of streams, not of events; at most `keptViolations` are kept.
public struct LogAudit {
    /// One broken promise, at the position where it shows.
    public struct Violation: Sendable, Equatable, CustomStringConvertible {
        public var position: Int64
        public var problem: String

        public init(position: Int64, problem: String) {
            self.position = position
            self.problem = problem
        }

        public var description: String { "position \(position): \(problem)" }
    }

    public static let keptViolations = 1_000

    /// The first `keptViolations` violations found.
    public private(set) var violations: [Violation] = []
    /// How many were found in all.
    public private(set) var violationCount = 0
    public private(set) var eventsChecked = 0

    private var nextPosition: Int64 = 1
    private var versions: [String: Int] = [:]
    private var ledger = Ledger()
    private var pendingPurchase: (position: Int64, commandId: String, event: ProductPurchased, price: Money)?

    public init() {}

    /// Audits a whole sequence of events, in log order.
    public static func violations(in events: some Sequence<RecordedEvent>) -> [Violation] {
        var audit = LogAudit()
        for event in events { audit.check(event) }
        audit.finish()
        return audit.violations
    }

    /// Checks the next event of the log.
    public mutating func check(_ event: RecordedEvent) {
        eventsChecked += 1
        let at = event.position
        checkSequence(event)
        let domainEvent: DomainEvent
        do {
            domainEvent = try EventCodec.decode(event)
        } catch {
            closePendingPurchase(before: at)
            return report(at, "unreadable: \(error)")
        }
        if domainEvent.stream.name != event.stream {
            report(at, "a \(event.type) of \(domainEvent.stream.name) is on stream \(event.stream)")
        }
        if case .order(.placed(let order)) = domainEvent {
            checkOrder(order, at: at, commandId: event.metadata.commandId)
        } else {
            closePendingPurchase(before: at)
        }
        for problem in ledger.apply(domainEvent) { report(at, problem) }
        if case .product(.purchased(let purchase)) = domainEvent {
            let price = ledger.price(of: purchase.productId) ?? .zero
            pendingPurchase = (at, event.metadata.commandId, purchase, price)
        }
    }

    /// Ends the audit: a purchase at the very end of the log has no order.
    public mutating func finish() {
        closePendingPurchase(before: nil)
    }

    private mutating func report(_ position: Int64, _ problem: String) {
        violationCount += 1
        if violations.count < Self.keptViolations { violations.append(Violation(position: position, problem: problem)) }
    }

    private mutating func checkSequence(_ event: RecordedEvent) {
        let at = event.position
        if at != nextPosition { report(at, "expected position \(nextPosition), found \(at)") }
        let (following, positionOverflow) = at.addingReportingOverflow(1)
        if positionOverflow { report(at, "the position is at the largest possible value") }
        nextPosition = following
        let previous = versions[event.stream] ?? 0
        let (expected, versionOverflow) = previous.addingReportingOverflow(1)
        if versionOverflow || event.version != expected {
            let wanted = versionOverflow ? "beyond \(previous)" : "\(expected)"
            report(at, "\(event.stream) expected version \(wanted), found \(event.version)")
        }
        versions[event.stream] = event.version
    }

    private mutating func checkOrder(_ order: OrderPlaced, at: Int64, commandId: String) {
        guard let purchase = pendingPurchase else {
            return report(at, "order \(order.orderId) has no purchase just before it")
        }
        pendingPurchase = nil
        let bought = purchase.event
        if bought.orderId != order.orderId || bought.userId != order.userId || bought.productId != order.productId
            || bought.quantity != order.quantity || purchase.commandId != commandId
        {
            report(at, "order \(order.orderId) does not match the purchase at position \(purchase.position)")
        }
        if order.unitPrice != purchase.price {
            report(at, "order \(order.orderId) is priced \(order.unitPrice), the product costs \(purchase.price)")
        }
        if (try? order.unitPrice.multiplied(by: order.quantity)) != order.totalPrice {
            report(at, "order \(order.orderId) totals \(order.totalPrice) for \(order.quantity) × \(order.unitPrice)")
        }
        if order.status != .pending { report(at, "order \(order.orderId) is placed as \(order.status)") }
    }

    private mutating func closePendingPurchase(before position: Int64?) {
        guard let purchase = pendingPurchase else { return }
        pendingPurchase = nil
        let next = position.map { "position \($0)" } ?? "the end of the log"
        report(purchase.position, "purchase for order \(purchase.event.orderId) is followed by \(next), not its order")
    }
}
