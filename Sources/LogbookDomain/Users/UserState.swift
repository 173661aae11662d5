/// A live user's profile.
public struct User: Sendable, Equatable {
    public var id: UserId
    public var name: PersonName
    public var email: EmailAddress
    public var gender: Gender
    public var birthday: Birthday?
    public var subscription: Subscription

    public init(
        id: UserId, name: PersonName, email: EmailAddress, gender: Gender, birthday: Birthday? = nil,
        subscription: Subscription
    ) {
        self.id = id
        self.name = name
        self.email = email
        self.gender = gender
        self.birthday = birthday
        self.subscription = subscription
    }
}

/// A user stream folded: never registered, live, deleted or forgotten (ids are never reused).
public enum UserState: Sendable, Equatable {
    case unregistered
    case live(User)
    case deleted
    case forgotten

    public static let initial = UserState.unregistered

    /// The live user, if there is one.
    public var liveUser: User? {
        if case .live(let user) = self { user } else { nil }
    }

    /// Folds one event. Events are facts: one that does not fit the state leaves it unchanged.
    public func evolved(by event: UserEvent) -> UserState {
        switch (self, event) {
        case (.unregistered, .registered(let e)):
            return .live(
                User(
                    id: e.userId, name: e.name, email: e.email, gender: e.gender, birthday: e.birthday,
                    subscription: e.subscription))
        case (.live(var user), .profileUpdated(let e)):
            user.name = e.name ?? user.name
            user.email = e.email ?? user.email
            user.gender = e.gender ?? user.gender
            user.birthday = e.birthday ?? user.birthday
            return .live(user)
        case (.live(var user), .subscriptionChanged(let e)):
            user.subscription = e.to
            return .live(user)
        case (.live, .deleted):
            return .deleted
        case (.live, .forgotten), (.deleted, .forgotten), (.unregistered, .forgotten):
            return .forgotten
        default:
            return self
        }
    }
}
