/// What happened to the claims of one bucket of normalised addresses, on the stream
/// `email-<bucket>`. The streams are how the log itself keeps addresses unique among live
/// users.
public enum EmailClaimEvent: Sendable, Equatable {
    case claimed(EmailClaimed)
    case released(EmailReleased)
    /// A claim or release whose address was forgotten with its user: it holds nothing.
    case forgotten(ForgottenEmailClaim)
}

public struct EmailClaimed: Sendable, Equatable {
    public var bucket: EmailBucket
    public var email: NormalizedEmail
    public var userId: UserId

    public init(bucket: EmailBucket, email: NormalizedEmail, userId: UserId) {
        self.bucket = bucket
        self.email = email
        self.userId = userId
    }
}

public struct EmailReleased: Sendable, Equatable {
    public var bucket: EmailBucket
    public var email: NormalizedEmail
    public var userId: UserId

    public init(bucket: EmailBucket, email: NormalizedEmail, userId: UserId) {
        self.bucket = bucket
        self.email = email
        self.userId = userId
    }
}

/// A claim event read back after its user was forgotten: the address is gone, the rest stays.
public struct ForgottenEmailClaim: Sendable, Equatable {
    public var bucket: EmailBucket
    public var userId: UserId
    /// The type the event was appended as (`EmailClaimed` or `EmailReleased`).
    public var typeName: String

    public init(bucket: EmailBucket, userId: UserId, typeName: String) {
        self.bucket = bucket
        self.userId = userId
        self.typeName = typeName
    }
}
