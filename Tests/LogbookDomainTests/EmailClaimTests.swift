import LogbookDomain
import Testing

@Suite("Email addresses are unique among live users")
struct EmailUniquenessTests {
    @Test func anAddressHeldByAnotherUserIsTaken() {
        given(registration("u1", email: "ann@example.com"))
            .when(registerUser("u2", email: "ann@example.com"))
            .thenError(.emailTaken)
    }

    @Test func uniquenessIgnoresCase() {
        given(registration("u1", email: "ann@example.com"))
            .when(registerUser("u2", email: "ANN@Example.COM"))
            .thenError(.emailTaken)
        given(registration("u1", email: "ANN@EXAMPLE.COM"))
            .when(registerUser("u2", email: "ann@example.com"))
            .thenError(.emailTaken)
    }

    @Test func takingAnotherUsersAddressByUpdateIsRefused() {
        given(registration("u1", email: "ann@example.com") + registration("u2", email: "bo@example.com"))
            .when(updateProfile("u2", name: "Bo", email: "Ann@example.com"))
            .thenError(.emailTaken)
    }

    @Test func deletingAUserFreesTheAddressForSomeoneElse() {
        given(
            registration("u1", email: "ann@example.com") + [
                userDeleted("u1"), emailReleased("ann@example.com", by: "u1"),
            ]
        )
        .when(registerUser("u2", email: "Ann@Example.com"))
        .then([userRegistered("u2", email: "Ann@Example.com"), emailClaimed("ann@example.com", by: "u2")])
    }

    @Test func changingAddressClaimsTheNewAndReleasesTheOld() {
        given(registration("u1", email: "ann@example.com"))
            .when(updateProfile("u1", email: "Ann.Lee@Example.com"))
            .then([
                profileUpdated("u1", email: "Ann.Lee@Example.com"),
                emailClaimed("ann.lee@example.com", by: "u1"),
                emailReleased("ann@example.com", by: "u1"),
            ])
    }

    @Test func anAddressGivenUpByUpdateCanBeTakenByAnotherUser() {
        let history =
            registration("u1", email: "ann@example.com")
            + [
                profileUpdated("u1", email: "ann2@example.com"), emailClaimed("ann2@example.com", by: "u1"),
                emailReleased("ann@example.com", by: "u1"),
            ]
        given(history)
            .when(registerUser("u2", email: "ann@example.com"))
            .then([userRegistered("u2", email: "ann@example.com"), emailClaimed("ann@example.com", by: "u2")])
        given(history)
            .when(registerUser("u2", email: "ann2@example.com"))
            .thenError(.emailTaken)
    }

    @Test func changingOnlyTheCaseKeepsTheClaim() {
        given(registration("u1", email: "ann@example.com"))
            .when(updateProfile("u1", email: "ANN@example.com"))
            .then([profileUpdated("u1", email: "ANN@example.com")])
    }

    @Test func sameAddressRecordsNothing() {
        given(registration("u1", email: "ann@example.com"))
            .when(updateProfile("u1", email: " ann@example.com "))
            .thenNothingHappens()
    }

    @Test func aDeletedUsersOldAddressCanBeTakenBackOnlyByALiveUser() {
        let history =
            registration("u1", email: "ann@example.com")
            + [userDeleted("u1"), emailReleased("ann@example.com", by: "u1")]
            + registration("u2", email: "ann@example.com")
        given(history)
            .when(registerUser("u3", email: "ann@example.com"))
            .thenError(.emailTaken)
    }

    @Test func refusedUpdateChangesNothingElse() {
        // The name change is refused along with the address: a decision is all or nothing.
        given(registration("u1", email: "ann@example.com") + registration("u2", name: "Bo", email: "bo@example.com"))
            .when(updateProfile("u2", name: "Robert", email: "ann@example.com"))
            .thenError(.emailTaken)
    }
}

@Suite("EmailClaimDecider")
struct EmailClaimDeciderTests {
    let ann = EmailAddress.of("Ann@Example.com")
    let bucket = EmailBucket.of("ann@example.com")

    @Test func claimingAFreeAddress() throws {
        #expect(
            try EmailClaimDecider.decide(.claim(ann, in: bucket, for: .of("u1")), state: .initial)
                == [.claimed(EmailClaimed(bucket: bucket, email: .of("ann@example.com"), userId: .of("u1")))])
    }

    @Test func anotherAddressOfTheBucketIsNoObstacle() throws {
        let state = EmailClaimState.holding(["bo@example.com": "u2"])
        #expect(try EmailClaimDecider.decide(.claim(ann, in: bucket, for: .of("u1")), state: state).count == 1)
    }

    @Test func reclaimingByTheHolderIsANoOp() throws {
        let state = EmailClaimState.holding(["ann@example.com": "u1"])
        #expect(try EmailClaimDecider.decide(.claim(ann, in: bucket, for: .of("u1")), state: state) == [])
    }

    @Test func claimingAnAddressHeldByAnotherIsTaken() {
        #expect(throws: DomainError.emailTaken) {
            try EmailClaimDecider.decide(
                .claim(ann, in: bucket, for: .of("u2")), state: .holding(["ann@example.com": "u1"]))
        }
    }

    @Test func onlyTheHolderReleases() throws {
        let email = NormalizedEmail.of("ann@example.com")
        let held = EmailClaimState.holding(["ann@example.com": "u1"])
        #expect(
            try EmailClaimDecider.decide(.release(email, in: bucket, from: .of("u1")), state: held)
                == [.released(EmailReleased(bucket: bucket, email: email, userId: .of("u1")))])
        #expect(try EmailClaimDecider.decide(.release(email, in: bucket, from: .of("u2")), state: held) == [])
        #expect(try EmailClaimDecider.decide(.release(email, in: bucket, from: .of("u1")), state: .initial) == [])
    }

    @Test func evolving() {
        let email = NormalizedEmail.of("ann@example.com")
        var state = EmailClaimState.initial
        state = EmailClaimDecider.evolve(state, .claimed(EmailClaimed(bucket: bucket, email: email, userId: .of("u1"))))
        #expect(state == .holding(["ann@example.com": "u1"]))
        state = EmailClaimDecider.evolve(
            state, .released(EmailReleased(bucket: bucket, email: email, userId: .of("u1"))))
        #expect(state == .initial)
    }

    @Test func aForgottenClaimHoldsNothing() {
        let state = EmailClaimDecider.evolve(
            .initial, .forgotten(ForgottenEmailClaim(bucket: bucket, userId: .of("u1"), typeName: "EmailClaimed")))
        #expect(state == .initial)
    }
}
