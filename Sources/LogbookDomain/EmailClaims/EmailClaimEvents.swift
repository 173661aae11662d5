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
