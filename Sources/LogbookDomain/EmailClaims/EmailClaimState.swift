/// The claims in one bucket: which live user holds each address in it. An address not in
/// `holders` is free.
public struct EmailClaimState: Sendable, Equatable {
    public private(set) var holders: [NormalizedEmail: UserId]

    public init(holders: [NormalizedEmail: UserId] = [:]) {
        self.holders = holders
    }

    public static let initial = EmailClaimState()

    /// The user who holds `email`, if any.
    public func holder(of email: NormalizedEmail) -> UserId? { holders[email] }

    /// Folds one event. A claim whose address was forgotten holds nothing: its user is gone.
    public func evolved(by event: EmailClaimEvent) -> EmailClaimState {
        var next = self
        switch event {
        case .claimed(let e): next.holders[e.email] = e.userId
        case .released(let e): if next.holders[e.email] == e.userId { next.holders[e.email] = nil }
        case .forgotten: break
        }
        return next
    }
}
