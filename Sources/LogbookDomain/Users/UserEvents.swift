/// Something that happened to a user, as recorded on the stream `user-<userId>`.
public enum UserEvent: Sendable, Equatable {
    case registered(UserRegistered)
    case profileUpdated(UserProfileUpdated)
    case subscriptionChanged(SubscriptionChanged)
    case deleted(UserDeleted)
    case forgotten(UserForgotten)
    /// An event whose personal values were forgotten (read back after its user's key was
    /// destroyed): it changes nothing, since its stream ends in `forgotten`.
    case erased(ErasedUserEvent)
}

public struct UserRegistered: Sendable, Equatable {
    public var userId: UserId
    public var name: PersonName
    public var email: EmailAddress
    public var gender: Gender
    public var birthday: Birthday?
    public var subscription: Subscription

    public init(
        userId: UserId, name: PersonName, email: EmailAddress, gender: Gender, birthday: Birthday?,
        subscription: Subscription
    ) {
        self.userId = userId
        self.name = name
        self.email = email
        self.gender = gender
        self.birthday = birthday
        self.subscription = subscription
    }
}

/// Only the fields that changed are present.
public struct UserProfileUpdated: Sendable, Equatable {
    public var userId: UserId
    public var name: PersonName?
    public var email: EmailAddress?
    public var gender: Gender?
    public var birthday: Birthday?

    public init(
        userId: UserId, name: PersonName? = nil, email: EmailAddress? = nil, gender: Gender? = nil,
        birthday: Birthday? = nil
    ) {
        self.userId = userId
        self.name = name
        self.email = email
        self.gender = gender
        self.birthday = birthday
    }
}

public struct SubscriptionChanged: Sendable, Equatable {
    public var userId: UserId
    public var from: Subscription
    public var to: Subscription

    public init(userId: UserId, from: Subscription, to: Subscription) {
        self.userId = userId
        self.from = from
        self.to = to
    }
}

public struct UserDeleted: Sendable, Equatable {
    public var userId: UserId

    public init(userId: UserId) { self.userId = userId }
}

/// The user asked to be forgotten: from now on their personal values read as absent.
public struct UserForgotten: Sendable, Equatable {
    public var userId: UserId

    public init(userId: UserId) { self.userId = userId }
}

/// A `UserRegistered` or `UserProfileUpdated` read back without its personal values.
public struct ErasedUserEvent: Sendable, Equatable {
    public var userId: UserId
    /// The type the event was appended as.
    public var typeName: String

    public init(userId: UserId, typeName: String) {
        self.userId = userId
        self.typeName = typeName
    }
}
