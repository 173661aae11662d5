public import LogbookDomain
public import LogbookJSON

/// A live user as queries show it. Deleted users have no view. `registeredAt` is the
/// recording time of `UserRegistered`, `updatedAt` that of the last event that changed
/// the user (equal to `registeredAt` until then).
public struct UserView: ReadModelView {
    public var userId: UserId
    public var name: String
    public var email: String
    public var gender: Gender
    public var birthday: Birthday?
    public var subscription: Subscription
    public var registeredAt: Timestamp
    public var updatedAt: Timestamp

    public init(
        userId: UserId, name: String, email: String, gender: Gender, birthday: Birthday?,
        subscription: Subscription, registeredAt: Timestamp, updatedAt: Timestamp
    ) {
        self.userId = userId
        self.name = name
        self.email = email
        self.gender = gender
        self.birthday = birthday
        self.subscription = subscription
        self.registeredAt = registeredAt
        self.updatedAt = updatedAt
    }

    /// True for every subscription but `free`.
    public var canAccessPremiumFeatures: Bool { subscription.canAccessPremiumFeatures }

    /// `{userId, name, email, gender, birthday?, subscription, canAccessPremiumFeatures,
    /// registeredAt, updatedAt}`; `birthday` is left out when the user gave none.
    public var json: JSONValue {
        var object: JSONObject = [
            "userId": .string(userId.rawValue), "name": .string(name), "email": .string(email),
            "gender": .string(gender.rawValue),
        ]
        object["birthday"] = birthday.map { .string($0.description) }
        object["subscription"] = .string(subscription.rawValue)
        object["canAccessPremiumFeatures"] = .bool(canAccessPremiumFeatures)
        object["registeredAt"] = .string(registeredAt.rfc3339)
        object["updatedAt"] = .string(updatedAt.rfc3339)
        return .object(object)
    }
}
