import LogbookDomain
import LogbookTestSupport
import Testing

/// Random commands, valid and invalid, against a small universe where ids and addresses
/// collide on purpose. Every accepted event is folded in, and after every step the rules
/// that must always hold are checked. A failure names its seed and step, so
/// `InvariantRun(seed:)` replays it exactly.
@Suite("Randomised invariants")
struct InvariantTests {
    static let seeds: [UInt64] = [1, 2, 3, 42, 0xDEAD_BEEF, 20_260_301, 0x5EED_0F_106B00C, 7_777_777]
    static let steps = 2_000

    @Test(arguments: seeds)
    func invariantsHoldAfterEveryStep(seed: UInt64) {
        var run = InvariantRun(seed: seed)
        for step in 0..<Self.steps {
            let raw = run.generator.next()
            let problems = run.step(raw)
            if !problems.isEmpty {
                let details = problems.joined(separator: "\n  ")
                Issue.record("seed \(seed), step \(step): \(raw.summary)\n  \(details)")
                return
            }
        }
        // The run must have reached every outcome, or it proves less than it claims.
        let codes: Set<String> = [
            "invalid_input", "not_found", "already_exists", "email_taken", "product_not_available",
            "insufficient_stock",
        ]
        #expect(codes.isSubset(of: run.outcomes.keys), "seed \(seed) outcomes: \(run.outcomes)")
        let types: Set<String> = [
            "UserRegistered", "UserProfileUpdated", "SubscriptionChanged", "UserDeleted", "EmailClaimed",
            "EmailReleased", "PostCreated", "PostEdited", "PostDeleted", "ProductAdded", "ProductUpdated",
            "ProductRestocked", "ProductRemoved", "ProductPurchased", "OrderPlaced", "no events",
        ]
        #expect(types.isSubset(of: run.outcomes.keys), "seed \(seed) outcomes: \(run.outcomes)")
    }
}

struct InvariantRun {
    var generator: CommandGenerator
    var model = ReferenceModel()
    var states = AggregateStates()
    var eventsByStream: [StreamId: [DomainEvent]] = [:]
    /// Per product, from its events: initial stock + restocks − purchases.
    var ledger: [ProductId: Int] = [:]
    /// How often each error code and event type occurred.
    var outcomes: [String: Int] = [:]

    init(seed: UInt64) {
        generator = CommandGenerator(random: SeededGenerator(seed: seed))
    }

    /// Runs one command and returns every broken rule (none, normally).
    mutating func step(_ raw: RawCommand) -> [String] {
        var problems = Problems()
        let command: Command
        do {
            command = try raw.parse(today: today)
        } catch {
            outcomes[error.code, default: 0] += 1
            problems.check(error.code == "invalid_input", "parsing refused with \(error)")
            return problems.list
        }

        let prediction = model.predict(command)
        let decide = { (states: AggregateStates) in
            Result { () throws(DomainError) -> [DomainEvent] in
                try CommandDecider.decide(command, given: states, buckets: buckets)
            }
        }
        let outcome = decide(states)
        problems.check(decide(states) == outcome, "deciding twice on the same state gave different answers")

        switch outcome {
        case .failure(let error):
            // A refused command appends nothing: there is nothing to fold.
            outcomes[error.code, default: 0] += 1
            problems.check(prediction == .refused(code: error.code), "expected \(prediction), got \(error)")
            problems.check(!error.message.isEmpty, "\(error) has no message")

        case .success(let events):
            for event in events { outcomes[event.typeName, default: 0] += 1 }
            if events.isEmpty { outcomes["no events", default: 0] += 1 }
            problems.check(
                prediction == .accepted(eventTypes: events.map(\.typeName)),
                "expected \(prediction), got \(events.map(\.typeName))")
            guard problems.list.isEmpty else { return problems.list }

            let read = streamsRead(by: command, in: states)
            for event in events {
                problems.check(read.contains(event.stream), "\(event.typeName) written to \(event.stream), not read")
                states.apply(event)
                eventsByStream[event.stream, default: []].append(event)
                problems.merge(checkLedger(after: event))
            }
            model.accept(command)
            for stream in Set(events.map(\.stream)) { problems.merge(checkFold(of: stream)) }
        }
        problems.merge(checkAgainstModel())
        problems.merge(checkEmailClaims())
        problems.merge(checkOrders())
        return problems.list
    }

    /// Stock is never negative and always equals initial stock + restocks − purchases.
    mutating func checkLedger(after event: DomainEvent) -> Problems {
        var problems = Problems()
        switch event {
        case .product(.added(let e)):
            ledger[e.productId] = e.stock.value
        case .product(.restocked(let e)):
            ledger[e.productId, default: 0] += e.quantity.value
            problems.check(
                e.stock.value == ledger[e.productId], "\(e) does not match the ledger \(ledger[e.productId]!)")
        case .product(.purchased(let e)):
            ledger[e.productId, default: 0] -= e.quantity.value
            problems.check(
                e.stock.value == ledger[e.productId], "\(e) does not match the ledger \(ledger[e.productId]!)")
        default:
            break
        }
        for (id, stock) in ledger {
            problems.check(stock >= 0, "product \(id) ledger is negative: \(stock)")
            if let product = states.product(id).liveProduct {
                problems.check(product.stock.value == stock, "product \(id) stock \(product.stock) ≠ ledger \(stock)")
            }
        }
        return problems
    }

    /// Folding a stream's own events gives the same state, and every value in it is valid.
    func checkFold(of stream: StreamId) -> Problems {
        var problems = Problems()
        let folded = AggregateStates(folding: eventsByStream[stream] ?? [])[stream]
        problems.check(folded == states[stream], "\(stream) folded alone differs from the running state")
        problems.check(StreamId(name: stream.name) == stream, "\(stream.name) does not read back")
        switch folded {
        case .user(.live(let user)):
            problems.check(UserId.isValid(user.id.rawValue), "user id \(user.id)")
            problems.check((try? PersonName(user.name.value)) == user.name, "user name \(user.name)")
            problems.check((try? EmailAddress(user.email.value)) == user.email, "user email \(user.email)")
            if let birthday = user.birthday {
                problems.check(
                    (try? Birthday(birthday.description, today: today)) == birthday, "user birthday \(birthday)")
            }
        case .emailClaim(let claims):
            for holder in claims.holders.values {
                problems.check(UserId.isValid(holder.rawValue), "claim holder \(holder)")
            }
        case .post(.live(let post)):
            problems.check((try? PostTitle(post.title.value)) == post.title, "post title \(post.title)")
            problems.check((try? PostContent(post.content.value)) == post.content, "post content")
            problems.check(UserId.isValid(post.authorId.rawValue), "post author \(post.authorId)")
        case .product(.live(let product)):
            problems.check((try? ProductName(product.name.value)) == product.name, "product name \(product.name)")
            problems.check((try? Money(product.price.description)) == product.price, "product price \(product.price)")
            problems.check((try? Stock(product.stock.value)) == product.stock, "product stock \(product.stock)")
        case .order(.placed(let order)):
            problems.check((try? Quantity(order.quantity.value)) == order.quantity, "order quantity \(order.quantity)")
            problems.check(
                (try? Money(order.unitPrice.description)) == order.unitPrice, "unit price \(order.unitPrice)")
            problems.check(order.status == .pending, "order status \(order.status)")
        default:
            break
        }
        return problems
    }

    /// The folded states agree with the reference model.
    func checkAgainstModel() -> Problems {
        var problems = Problems()
        for (id, row) in model.users {
            let state = states.user(.of(id))
            if row.live, let user = state.liveUser {
                problems.check(
                    user.name == row.name && user.email == row.email && user.gender == row.gender
                        && user.birthday == row.birthday && user.subscription == row.subscription,
                    "user \(id) is \(user), the model says \(row)")
            } else {
                problems.check(
                    !row.live && state == (row.forgotten ? .forgotten : .deleted),
                    "user \(id) is \(state), the model says live: \(row.live), forgotten: \(row.forgotten)")
            }
        }
        for (id, row) in model.posts {
            switch states.post(.of(id)) {
            case .live(let post):
                problems.check(row.live && post.title == row.title && post.content == row.content, "post \(id) ≠ model")
            case let other:
                problems.check(
                    !row.live && other == .deleted, "post \(id) is \(other), the model says live: \(row.live)")
            }
        }
        for (id, row) in model.products {
            let state = states.product(.of(id))
            if row.live, let product = state.liveProduct {
                problems.check(
                    product.name == row.name && product.price.cents == row.priceCents
                        && product.category == row.category
                        && product.stock.value == row.stock,
                    "product \(id) is \(product), the model says \(row)")
            } else {
                problems.check(
                    !row.live && state == .removed, "product \(id) is \(state), the model says live: \(row.live)")
            }
        }
        return problems
    }

    /// No two live users share a normalised address; each live user holds the claim on theirs,
    /// and every held claim belongs to the live user with that address.
    func checkEmailClaims() -> Problems {
        var problems = Problems()
        var holders: [NormalizedEmail: UserId] = [:]
        for case .user(.live(let user)) in states.byStream.values {
            if let other = holders[user.email.normalized] {
                problems.fail("users \(other) and \(user.id) both hold \(user.email.normalized)")
            }
            holders[user.email.normalized] = user.id
            let claims = states.emailClaims(buckets.bucket(of: user.email.normalized))
            problems.check(
                claims.holder(of: user.email.normalized) == user.id,
                "\(user.id)'s address \(user.email) is held by \(String(describing: claims.holder(of: user.email.normalized)))"
            )
        }
        for (stream, state) in states.byStream {
            guard case .email = stream, case .emailClaim(let claims) = state else { continue }
            for (email, holder) in claims.holders {
                problems.check(
                    holders[email] == holder, "\(stream) holds \(email) for \(holder), who is not a live user with it")
            }
        }
        return problems
    }

    /// Every order's total is exactly its unit price times its quantity, at the price of the time.
    func checkOrders() -> Problems {
        var problems = Problems()
        for case .order(.placed(let order)) in states.byStream.values {
            let (total, overflow) = order.unitPrice.cents.multipliedReportingOverflow(by: Int64(order.quantity.value))
            problems.check(!overflow && order.totalPrice.cents == total, "order \(order.id): \(order)")
            let row = model.orders[order.id.rawValue]
            problems.check(
                row?.unitPriceCents == order.unitPrice.cents && row?.quantity == order.quantity.value
                    && row?.userId == order.userId.rawValue && row?.productId == order.productId.rawValue,
                "order \(order.id) is \(order), the model says \(String(describing: row))")
        }
        problems.check(
            model.orders.count == states.byStream.keys.filter { $0.category == "order" }.count,
            "the model has \(model.orders.count) orders")
        return problems
    }
}

/// Broken rules collected during one step.
struct Problems {
    private(set) var list: [String] = []

    mutating func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { list.append(message()) }
    }

    mutating func fail(_ message: String) { list.append(message) }

    mutating func merge(_ other: Problems) { list += other.list }
}
