import LogbookDomain
import Testing

@Suite("Users")
struct UserTests {
    @Test func registeringRecordsTheUserAndClaimsTheAddress() {
        given([])
            .when(registerUser("u1", name: " Ann ", email: "Ann@Example.com"))
            .then([
                userRegistered("u1", name: "Ann", email: "Ann@Example.com", gender: .unknown, subscription: .free),
                emailClaimed("ann@example.com", by: "u1"),
            ])
    }

    @Test func registeringKeepsEveryGivenField() {
        given([])
            .when(
                registerUser(
                    "u1", email: "ann@example.com", gender: .female, birthday: "1990-05-17", subscription: .premium)
            )
            .then([
                userRegistered(
                    "u1", email: "ann@example.com", gender: .female, birthday: "1990-05-17", subscription: .premium),
                emailClaimed("ann@example.com", by: "u1"),
            ])
    }

    @Test func defaultsAreUnknownGenderFreeSubscriptionNoBirthday() {
        let command = RegisterUser(userId: .of("u1"), name: .of("Ann"), email: .of("ann@example.com"))
        #expect(command.gender == .unknown)
        #expect(command.subscription == .free)
        #expect(command.birthday == nil)
    }

    @Test func aUserIdIsUsedOnce() {
        given(registration("u1", email: "ann@example.com"))
            .when(registerUser("u1", email: "other@example.com"))
            .thenError(.alreadyExists(.user, id: "u1"))
    }

    @Test func aDeletedUsersIdIsNeverReused() {
        given(
            registration("u1", email: "ann@example.com") + [
                userDeleted("u1"), emailReleased("ann@example.com", by: "u1"),
            ]
        )
        .when(registerUser("u1", email: "ann@example.com"))
        .thenError(.alreadyExists(.user, id: "u1"))
    }

    @Test func updatingRecordsOnlyTheChangedFields() {
        given(registration("u1", name: "Ann", email: "ann@example.com"))
            .when(updateProfile("u1", name: "Ann", gender: .female, birthday: "1980-01-31"))
            .then([profileUpdated("u1", gender: .female, birthday: "1980-01-31")])
    }

    @Test func updatingWithUnchangedFieldsRecordsNothing() {
        let history =
            registration("u1", name: "Ann", email: "ann@example.com")
            + [profileUpdated("u1", gender: .male, birthday: "1970-01-01")]
        given(history).when(updateProfile("u1", name: " Ann ")).thenNothingHappens()
        given(history)
            .when(updateProfile("u1", name: "Ann", email: "ann@example.com", gender: .male, birthday: "1970-01-01"))
            .thenNothingHappens()
    }

    @Test func anUpdateWithNoFieldsCannotBeBuilt() {
        #expect(
            throws: DomainError.invalidInput(
                field: "data", reason: "give at least one of name, email, gender, birthday")
        ) {
            try UpdateUserProfile(userId: .of("u1"))
        }
    }

    @Test func updatingAnUnknownOrDeletedUserIsNotFound() {
        given([]).when(updateProfile("u1", name: "Bo")).thenError(.notFound(.user, id: "u1"))
        given(registration("u1", email: "ann@example.com") + [userDeleted("u1")])
            .when(updateProfile("u1", name: "Bo"))
            .thenError(.notFound(.user, id: "u1"))
    }

    @Test func changingTheSubscriptionRecordsFromAndTo() {
        given(registration("u1", email: "ann@example.com"))
            .when(changeSubscription("u1", to: .enterprise))
            .then([subscriptionChanged("u1", from: .free, to: .enterprise)])
        given(registration("u1", email: "ann@example.com") + [subscriptionChanged("u1", from: .free, to: .premium)])
            .when(changeSubscription("u1", to: .free))
            .then([subscriptionChanged("u1", from: .premium, to: .free)])
    }

    @Test func theSameSubscriptionRecordsNothing() {
        given(registration("u1", email: "ann@example.com", subscription: .premium))
            .when(changeSubscription("u1", to: .premium))
            .thenNothingHappens()
    }

    @Test func changingTheSubscriptionOfAnUnknownOrDeletedUserIsNotFound() {
        given([]).when(changeSubscription("u1", to: .premium)).thenError(.notFound(.user, id: "u1"))
        given(registration("u1", email: "ann@example.com") + [userDeleted("u1")])
            .when(changeSubscription("u1", to: .premium))
            .thenError(.notFound(.user, id: "u1"))
    }

    @Test func deletingReleasesTheAddress() {
        given(registration("u1", email: "Ann@Example.com"))
            .when(deleteUser("u1"))
            .then([userDeleted("u1"), emailReleased("ann@example.com", by: "u1")])
    }

    @Test func deletingTwiceOrAnUnknownUserIsNotFound() {
        given([]).when(deleteUser("u1")).thenError(.notFound(.user, id: "u1"))
        given(
            registration("u1", email: "ann@example.com") + [
                userDeleted("u1"), emailReleased("ann@example.com", by: "u1"),
            ]
        )
        .when(deleteUser("u1"))
        .thenError(.notFound(.user, id: "u1"))
    }
}

@Suite("UserDecider and user state")
struct UserDeciderTests {
    let ann = User(
        id: .of("u1"), name: .of("Ann"), email: .of("ann@example.com"), gender: .unknown, birthday: nil,
        subscription: .free)

    @Test func decidesOnOneStreamWithoutEmailClaims() throws {
        let events = try UserDecider.decide(
            .register(RegisterUser(userId: .of("u1"), name: .of("Ann"), email: .of("ann@example.com"))),
            state: .initial)
        #expect(events.count == 1)
        #expect(events.map(DomainEvent.user) == [userRegistered("u1", email: "ann@example.com")])
        #expect(try UserDecider.decide(.delete(DeleteUser(userId: .of("u1"))), state: .live(ann)).count == 1)
    }

    @Test func aDeletedUserIsNotFoundAndCannotRegisterAgain() {
        #expect(throws: DomainError.notFound(.user, id: "u1")) {
            try UserDecider.decide(
                .updateProfile(try UpdateUserProfile(userId: .of("u1"), gender: .other)), state: .deleted)
        }
        #expect(throws: DomainError.alreadyExists(.user, id: "u1")) {
            try UserDecider.decide(
                .register(RegisterUser(userId: .of("u1"), name: .of("Ann"), email: .of("ann@example.com"))),
                state: .deleted)
        }
    }

    @Test func evolvingFollowsTheLifecycle() {
        var state = UserState.initial
        #expect(state == .unregistered && state.liveUser == nil)
        state = UserDecider.evolve(
            state,
            .registered(
                UserRegistered(
                    userId: .of("u1"), name: .of("Ann"), email: .of("ann@example.com"), gender: .unknown, birthday: nil,
                    subscription: .free)))
        #expect(state.liveUser == ann)
        state = UserDecider.evolve(
            state, .profileUpdated(UserProfileUpdated(userId: .of("u1"), email: .of("Ann@Example.com"), gender: .other))
        )
        #expect(state.liveUser?.email.value == "Ann@Example.com")
        #expect(state.liveUser?.gender == .other)
        #expect(state.liveUser?.name == ann.name, "absent fields stay")
        state = UserDecider.evolve(
            state, .subscriptionChanged(SubscriptionChanged(userId: .of("u1"), from: .free, to: .premium)))
        #expect(state.liveUser?.subscription == .premium)
        state = UserDecider.evolve(state, .deleted(UserDeleted(userId: .of("u1"))))
        #expect(state == .deleted)
    }

    @Test func eventsThatDoNotFitLeaveTheStateAlone() {
        let registered = UserEvent.registered(
            UserRegistered(
                userId: .of("u1"), name: .of("Bo"), email: .of("bo@example.com"), gender: .male, birthday: nil,
                subscription: .premium))
        #expect(UserState.live(ann).evolved(by: registered) == .live(ann))
        #expect(UserState.deleted.evolved(by: registered) == .deleted)
        #expect(UserState.unregistered.evolved(by: .deleted(UserDeleted(userId: .of("u1")))) == .unregistered)
        #expect(
            UserState.deleted.evolved(
                by: .subscriptionChanged(SubscriptionChanged(userId: .of("u1"), from: .free, to: .premium)))
                == .deleted)
    }
}
