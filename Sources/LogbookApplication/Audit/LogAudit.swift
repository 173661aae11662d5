import LogbookDomain

/// Re-checks a log event by event, independently of the deciders that wrote it, and
/// reports every place where it breaks a promise of the service: positions 1, 2, 3 …
/// without holes; versions 1, 2, 3 … per stream; every event readable and on its own
/// stream; stock figures that follow from the ones before and never go negative;
/// purchases only of products on sale; exact order totals; no address claimed twice or
/// released by someone else; no two live users with one address. It finds what a bug,
/// a damaged file or a hand edit would break. Memory grows with the number of streams,
/// not events.
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

    public private(set) var violations: [Violation] = []
    public private(set) var eventsChecked = 0

    private var nextPosition: Int64 = 1
    private var versions: [String: Int] = [:]
    private var stock: [ProductId: Int] = [:]  // products on sale
    private var claims: [NormalizedEmail: UserId] = [:]
    private var emailOfLiveUser: [UserId: NormalizedEmail] = [:]
    private var liveUserWithEmail: [NormalizedEmail: UserId] = [:]

    public init() {}

    /// Audits a whole sequence of events, in log order.
    public static func violations(in events: some Sequence<RecordedEvent>) -> [Violation] {
        var audit = LogAudit()
        for event in events { audit.check(event) }
        return audit.violations
    }

    /// Checks the next event of the log.
    public mutating func check(_ event: RecordedEvent) {
        eventsChecked += 1
        let at = event.position
        if at != nextPosition { report(at, "expected position \(nextPosition), found \(at)") }
        nextPosition = at + 1
        let version = (versions[event.stream] ?? 0) + 1
        if event.version != version {
            report(at, "\(event.stream) expected version \(version), found \(event.version)")
        }
        versions[event.stream] = event.version

        let domainEvent: DomainEvent
        do {
            domainEvent = try EventCodec.decode(event)
        } catch {
            return report(at, "unreadable: \(error)")
        }
        if domainEvent.stream.name != event.stream {
            report(at, "a \(event.type) of \(domainEvent.stream.name) is on stream \(event.stream)")
        }
        switch domainEvent {
        case .product(let productEvent): checkProduct(productEvent, at: at)
        case .order(.placed(let e)): checkOrder(e, at: at)
        case .emailClaim(let claimEvent): checkClaim(claimEvent, at: at)
        case .user(let userEvent): checkUser(userEvent, at: at)
        case .post: break
        }
    }

    private mutating func report(_ position: Int64, _ problem: String) {
        violations.append(Violation(position: position, problem: problem))
    }

    private mutating func checkProduct(_ event: ProductEvent, at: Int64) {
        switch event {
        case .added(let e):
            stock[e.productId] = e.stock.value
        case .updated:
            break
        case .restocked(let e):
            guard let before = stock[e.productId] else { return report(at, "restock of \(e.productId), not on sale") }
            if e.stock.value != before + e.quantity.value {
                report(at, "\(e.productId) restocked \(e.quantity) from \(before) to \(e.stock)")
            }
            stock[e.productId] = e.stock.value
        case .purchased(let e):
            guard let before = stock[e.productId] else { return report(at, "purchase of \(e.productId), not on sale") }
            if before < e.quantity.value || e.stock.value != before - e.quantity.value {
                report(at, "\(e.productId) sold \(e.quantity) from \(before), leaving \(e.stock)")
            }
            stock[e.productId] = e.stock.value
        case .removed(let e):
            stock[e.productId] = nil
        }
    }

    private mutating func checkOrder(_ e: OrderPlaced, at: Int64) {
        let total = try? e.unitPrice.multiplied(by: e.quantity)
        if total != e.totalPrice {
            report(at, "order \(e.orderId) totals \(e.totalPrice) for \(e.quantity) × \(e.unitPrice)")
        }
    }

    private mutating func checkClaim(_ event: EmailClaimEvent, at: Int64) {
        switch event {
        case .claimed(let e):
            if let holder = claims[e.email] { report(at, "\(e.email) claimed by \(e.userId) while \(holder) holds it") }
            claims[e.email] = e.userId
        case .released(let e):
            if claims[e.email] != e.userId { report(at, "\(e.email) released by \(e.userId), who does not hold it") }
            claims[e.email] = nil
        }
    }

    private mutating func checkUser(_ event: UserEvent, at: Int64) {
        switch event {
        case .registered(let e):
            takeEmail(e.email.normalized, for: e.userId, at: at)
        case .profileUpdated(let e):
            if let email = e.email?.normalized { takeEmail(email, for: e.userId, at: at) }
        case .subscriptionChanged:
            break
        case .deleted(let e):
            if let email = emailOfLiveUser.removeValue(forKey: e.userId) { liveUserWithEmail[email] = nil }
        }
    }

    private mutating func takeEmail(_ email: NormalizedEmail, for userId: UserId, at: Int64) {
        if let other = liveUserWithEmail[email], other != userId {
            report(at, "\(userId) and \(other) are both live with \(email)")
        }
        if let old = emailOfLiveUser[userId], liveUserWithEmail[old] == userId { liveUserWithEmail[old] = nil }
        emailOfLiveUser[userId] = email
        liveUserWithEmail[email] = userId
    }
}
