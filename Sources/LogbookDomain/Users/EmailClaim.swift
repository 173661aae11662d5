/// What happened to one normalised email address, on the stream `email-<address>`.
/// The stream is how the log itself keeps addresses unique among live users.
public enum EmailClaimEvent: Sendable, Equatable {
    case claimed(EmailClaimed)
    case released(EmailReleased)
}

public struct EmailClaimed: Sendable, Equatable {
    public var email: NormalizedEmail
    public var userId: UserId

    public init(email: NormalizedEmail, userId: UserId) {
        self.email = email
        self.userId = userId
    }
}

public struct EmailReleased: Sendable, Equatable {
    public var email: NormalizedEmail
    public var userId: UserId

    public init(email: NormalizedEmail, userId: UserId) {
        self.email = email
        self.userId = userId
    }
}

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

/// What can be asked of an email address.
public enum EmailClaimCommand: Sendable, Equatable {
    case claim(EmailAddress, for: UserId)
    case release(NormalizedEmail, from: UserId)
}

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
