/// An address is free, or held by one user.
public enum EmailClaimState: Sendable, Equatable {
    case free
    case claimed(by: UserId)

    public static let initial = EmailClaimState.free

    public func evolved(by event: EmailClaimEvent) -> EmailClaimState {
        switch event {
        case .claimed(let e): .claimed(by: e.userId)
        case .released: .free
        }
    }
}
