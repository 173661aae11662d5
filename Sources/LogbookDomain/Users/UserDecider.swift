/// Decides commands on one user stream. Email uniqueness spans users, so it is decided
/// by `EmailClaimDecider` in the same command (see `CommandDecider`).
public enum UserDecider {
    public static func decide(_ command: UserCommand, state: UserState) throws(DomainError) -> [UserEvent] {
        switch command {
        case .register(let c):
            guard case .unregistered = state else { throw .alreadyExists(.user, id: c.userId.rawValue) }
            return [
                .registered(
                    UserRegistered(
                        userId: c.userId, name: c.name, email: c.email, gender: c.gender, birthday: c.birthday,
                        subscription: c.subscription))
            ]

        case .updateProfile(let c):
            let user = try live(state, c.userId)
            let change = UserProfileUpdated(
                userId: c.userId,
                name: c.name.flatMap { $0 == user.name ? nil : $0 },
                email: c.email.flatMap { $0 == user.email ? nil : $0 },
                gender: c.gender.flatMap { $0 == user.gender ? nil : $0 },
                birthday: c.birthday.flatMap { $0 == user.birthday ? nil : $0 })
            let changesSomething =
                change.name != nil || change.email != nil || change.gender != nil || change.birthday != nil
            return changesSomething ? [.profileUpdated(change)] : []

        case .changeSubscription(let c):
            let user = try live(state, c.userId)
            guard user.subscription != c.subscription else { return [] }
            return [
                .subscriptionChanged(SubscriptionChanged(userId: c.userId, from: user.subscription, to: c.subscription))
            ]

        case .delete(let c):
            _ = try live(state, c.userId)
            return [.deleted(UserDeleted(userId: c.userId))]

        case .forget(let c):
            switch state {
            case .live, .deleted: return [.forgotten(UserForgotten(userId: c.userId))]
            case .unregistered, .forgotten: throw .notFound(.user, id: c.userId.rawValue)
            }
        }
    }

    public static func evolve(_ state: UserState, _ event: UserEvent) -> UserState {
        state.evolved(by: event)
    }

    private static func live(_ state: UserState, _ id: UserId) throws(DomainError) -> User {
        guard let user = state.liveUser else { throw .notFound(.user, id: id.rawValue) }
        return user
    }
}
