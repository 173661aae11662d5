/// What can be asked of an email address.
public enum EmailClaimCommand: Sendable, Equatable {
    case claim(EmailAddress, in: EmailBucket, for: UserId)
    case release(NormalizedEmail, in: EmailBucket, from: UserId)
}
