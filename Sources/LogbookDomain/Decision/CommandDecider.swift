/// Decides a whole command: it runs the decider of each aggregate the command touches
/// and returns every event to append, in order, as one atomic decision. Pure: the
/// states are handed in, nothing is read from outside; `buckets` says which stream holds
/// the claims of an address.
public enum CommandDecider {
    public static func decide(_ command: Command, given states: AggregateStates, buckets: EmailBucketing)
        throws(DomainError) -> [DomainEvent]
    {
        switch command {
        case .user(let userCommand):
            return try decideUser(userCommand, given: states, buckets: buckets)

        case .post(let postCommand):
            let author: UserState =
                if case .create(let c) = postCommand { states.user(c.authorId) } else { .unregistered }
            return try PostDecider.decide(postCommand, state: states.post(postCommand.postId), author: author)
                .map(DomainEvent.post)

        case .product(.purchase(let c)):
            let productState = states.product(c.productId)
            guard let product = productState.liveProduct else { throw .notFound(.product, id: c.productId.rawValue) }
            let orderEvents = try OrderDecider.decide(
                .place(c, unitPrice: product.price), state: states.order(c.orderId), buyer: states.user(c.userId))
            let productEvents = try ProductDecider.decide(.purchase(c), state: productState)
            return productEvents.map(DomainEvent.product) + orderEvents.map(DomainEvent.order)

        case .product(let productCommand):
            return try ProductDecider.decide(productCommand, state: states.product(productCommand.productId))
                .map(DomainEvent.product)
        }
    }

    /// User commands also claim and release email addresses, so that no two live users share one.
    private static func decideUser(_ command: UserCommand, given states: AggregateStates, buckets: EmailBucketing)
        throws(DomainError) -> [DomainEvent]
    {
        let userId = command.userId
        let before = states.user(userId)
        let userEvents = try UserDecider.decide(command, state: before)
        let after = userEvents.reduce(before) { $0.evolved(by: $1) }

        // Claims and releases are decided in order against one bucket state each, so that
        // moving between two addresses of the same bucket sees its own claim.
        var claims: [EmailBucket: EmailClaimState] = [:]
        func state(of bucket: EmailBucket) -> EmailClaimState { claims[bucket] ?? states.emailClaims(bucket) }
        var claimEvents: [EmailClaimEvent] = []
        let oldEmail = before.liveUser?.email.normalized
        let newEmail = after.liveUser?.email.normalized
        if let newEmail, newEmail != oldEmail, let address = after.liveUser?.email {
            let bucket = buckets.bucket(of: newEmail)
            let events = try EmailClaimDecider.decide(
                .claim(address, in: bucket, for: userId), state: state(of: bucket))
            claims[bucket] = events.reduce(state(of: bucket)) { $0.evolved(by: $1) }
            claimEvents += events
        }
        if let oldEmail, oldEmail != newEmail {
            let bucket = buckets.bucket(of: oldEmail)
            claimEvents += try EmailClaimDecider.decide(
                .release(oldEmail, in: bucket, from: userId), state: state(of: bucket))
        }
        return userEvents.map(DomainEvent.user) + claimEvents.map(DomainEvent.emailClaim)
    }
}
