/// What can be asked of a user. Values are already valid; the decider checks the rules
/// that depend on state.
public enum UserCommand: Sendable, Equatable {
    case register(RegisterUser)
    case updateProfile(UpdateUserProfile)
    case changeSubscription(ChangeSubscription)
    case delete(DeleteUser)
    case forget(ForgetUser)

    /// The user the command is about.
    public var userId: UserId {
        switch self {
        case .register(let c): c.userId
        case .updateProfile(let c): c.userId
        case .changeSubscription(let c): c.userId
        case .delete(let c): c.userId
        case .forget(let c): c.userId
        }
    }
}

public struct RegisterUser: Sendable, Equatable {
    public var userId: UserId
    public var name: PersonName
    public var email: EmailAddress
    public var gender: Gender
    public var birthday: Birthday?
    public var subscription: Subscription

    public init(
        userId: UserId, name: PersonName, email: EmailAddress, gender: Gender = .unknown,
        birthday: Birthday? = nil, subscription: Subscription = .free
    ) {
        self.userId = userId
        self.name = name
        self.email = email
        self.gender = gender
        self.birthday = birthday
        self.subscription = subscription
    }
}

/// Absent fields stay as they are; at least one must be given, so an empty update cannot
/// be built at all.
public struct UpdateUserProfile: Sendable, Equatable {
    public var userId: UserId
    public var name: PersonName?
    public var email: EmailAddress?
    public var gender: Gender?
    public var birthday: Birthday?

    public init(
        userId: UserId, name: PersonName? = nil, email: EmailAddress? = nil, gender: Gender? = nil,
        birthday: Birthday? = nil
    ) throws(DomainError) {
        guard name != nil || email != nil || gender != nil || birthday != nil else {
            throw .invalidInput(field: "data", reason: "give at least one of name, email, gender, birthday")
        }
        self.userId = userId
        self.name = name
        self.email = email
        self.gender = gender
        self.birthday = birthday
    }
}

public struct ChangeSubscription: Sendable, Equatable {
    public var userId: UserId
    public var subscription: Subscription

    public init(userId: UserId, subscription: Subscription) {
        self.userId = userId
        self.subscription = subscription
    }
}

public struct DeleteUser: Sendable, Equatable {
    public var userId: UserId

    public init(userId: UserId) { self.userId = userId }
}

/// Forgets a user for good: their personal values become unreadable everywhere (the
/// service destroys their key), and their address is free again. A live or deleted user
/// can be forgotten, once.
public struct ForgetUser: Sendable, Equatable {
    public var userId: UserId

    public init(userId: UserId) { self.userId = userId }
}
