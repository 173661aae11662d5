import LogbookDomain
import Testing

@Suite("Forgetting a user")
struct ForgetUserTests {
    @Test func aLiveUserIsForgottenAndTheirAddressReleased() {
        given(registration("u1", email: "ann@example.com"))
            .when(forgetUser("u1"))
            .then([userForgotten("u1"), emailReleased("ann@example.com", by: "u1")])
    }

    @Test func aDeletedUserIsForgottenToo() {
        given(
            registration("u1", email: "ann@example.com") + [
                userDeleted("u1"), emailReleased("ann@example.com", by: "u1"),
            ]
        )
        .when(forgetUser("u1"))
        .then([userForgotten("u1")])
    }

    @Test func anUnknownUserIsNotFound() {
        given([])
            .when(forgetUser("u1"))
            .thenError(.notFound(.user, id: "u1"))
    }

    @Test func aForgottenUserIsNotForgottenAgain() {
        given(
            registration("u1", email: "ann@example.com") + [
                userForgotten("u1"), emailReleased("ann@example.com", by: "u1"),
            ]
        )
        .when(forgetUser("u1"))
        .thenError(.notFound(.user, id: "u1"))
    }

    @Test func aForgottenUserCanNoLongerActOrBeActedOn() {
        let history = registration("u1", email: "ann@example.com") + [userForgotten("u1")]
        given(history).when(updateProfile("u1", name: "Ann Lee")).thenError(.notFound(.user, id: "u1"))
        given(history).when(deleteUser("u1")).thenError(.notFound(.user, id: "u1"))
        given(history).when(createPost("p1", author: "u1")).thenError(.notFound(.user, id: "u1"))
        given(history).when(registerUser("u1", email: "bo@example.com")).thenError(.alreadyExists(.user, id: "u1"))
    }

    @Test func theAddressOfAForgottenUserIsFreeForAnotherUser() {
        // Once the key is destroyed, the user's events read back erased and their claim forgotten.
        given([
            erased("UserRegistered", of: "u1"), claimForgotten("ann@example.com", by: "u1"), userForgotten("u1"),
            .emailClaim(
                .forgotten(
                    ForgottenEmailClaim(bucket: .of("ann@example.com"), userId: .of("u1"), typeName: "EmailReleased"))),
        ])
        .when(registerUser("u2", email: "ann@example.com"))
        .then([userRegistered("u2", email: "ann@example.com"), emailClaimed("ann@example.com", by: "u2")])
    }

    @Test func erasedEventsFoldToAForgottenUser() {
        let states = AggregateStates(
            folding: [
                erased("UserRegistered", of: "u1"), erased("UserProfileUpdated", of: "u1"), userForgotten("u1"),
            ])
        #expect(states.user(.of("u1")) == .forgotten)
    }
}
