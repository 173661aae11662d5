/// Decides claims on addresses of one bucket: each address is free, or held by exactly one user.
public enum EmailClaimDecider {
    public static func decide(_ command: EmailClaimCommand, state: EmailClaimState) throws(DomainError)
        -> [EmailClaimEvent]
    {
        switch command {
        case .claim(let address, let bucket, let userId):
            switch state.holder(of: address.normalized) {
            case nil: return [.claimed(EmailClaimed(bucket: bucket, email: address.normalized, userId: userId))]
            case .some(userId): return []
            case .some: throw .emailTaken
            }
        case .release(let email, let bucket, let userId):
            guard state.holder(of: email) == userId else { return [] }
            return [.released(EmailReleased(bucket: bucket, email: email, userId: userId))]
        }
    }

    public static func evolve(_ state: EmailClaimState, _ event: EmailClaimEvent) -> EmailClaimState {
        state.evolved(by: event)
    }
}
