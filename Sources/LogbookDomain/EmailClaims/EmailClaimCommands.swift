/// What can be asked of an email address.
public enum EmailClaimCommand: Sendable, Equatable {
    case claim(EmailAddress, for: UserId)
    case release(NormalizedEmail, from: UserId)
}
