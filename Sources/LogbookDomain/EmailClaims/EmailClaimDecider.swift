/// Decides claims on one address: it is free, or held by exactly one user.
public enum EmailClaimDecider {
    public static func decide(_ command: EmailClaimCommand, state: EmailClaimState) throws(DomainError)
        -> [EmailClaimEvent]
    {
        switch (command, state) {
        case (.claim(let address, let userId), .free):
            return [.claimed(EmailClaimed(email: address.normalized, userId: userId))]
        case (.claim(_, let userId), .claimed(let holder)) where holder == userId:
            return []
        case (.claim(let address, _), .claimed):
            throw .emailTaken(email: address.value)
        case (.release(let email, let userId), .claimed(let holder)) where holder == userId:
            return [.released(EmailReleased(email: email, userId: userId))]
        case (.release, _):
            return []
        }
    }

    public static func evolve(_ state: EmailClaimState, _ event: EmailClaimEvent) -> EmailClaimState {
        state.evolved(by: event)
    }
}
