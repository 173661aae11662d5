import LogbookDomain
import Testing

@Suite("Purchases")
struct PurchaseTests {
    let ann = registration("u1", email: "ann@example.com")

    @Test func aPurchaseTakesStockAndPlacesAPendingOrder() {
        given(ann + [productAdded("pr1", price: "19.99", stock: 10)])
            .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 3))
            .then([
                productPurchased("pr1", order: "o1", user: "u1", quantity: 3, stock: 7),
                orderPlaced("o1", user: "u1", product: "pr1", quantity: 3, unitPrice: "19.99", totalPrice: "59.97"),
            ])
    }

    @Test func theTwoEventsGoOnTheProductAndOrderStreams() throws {
        let decision = given(ann + [productAdded("pr1")])
            .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 1))
        let events = try decision.outcome.get()
        #expect(events.map(\.stream.name) == ["product-pr1", "order-o1"])
        #expect(events.map(\.typeName) == ["ProductPurchased", "OrderPlaced"])
    }

    @Test(arguments: [
        ("0.10", 3, "0.30"), ("19.9", 2, "39.80"), ("0", 5, "0.00"), ("0.01", 999, "9.99"),
        ("999999999.99", 1, "999999999.99"), ("1234.56", 1000, "1234560.00"), ("0.99", 1_000_000, "990000.00"),
    ])
    func totalIsUnitPriceTimesQuantityExactly(_ price: String, _ quantity: Int, _ total: String) {
        given(ann + [productAdded("pr1", price: price, stock: 1_000_000)])
            .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: quantity))
            .then([
                productPurchased("pr1", order: "o1", user: "u1", quantity: quantity, stock: 1_000_000 - quantity),
                orderPlaced("o1", user: "u1", product: "pr1", quantity: quantity, unitPrice: price, totalPrice: total),
            ])
    }

    @Test func theOrderUsesTheCurrentPrice() {
        given(ann + [productAdded("pr1", price: "19.99"), productUpdated("pr1", price: "5")])
            .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 2))
            .then([
                productPurchased("pr1", order: "o1", user: "u1", quantity: 2, stock: 8),
                orderPlaced("o1", user: "u1", product: "pr1", quantity: 2, unitPrice: "5.00", totalPrice: "10.00"),
            ])
    }

    @Test func buyingTheLastItemsEmptiesTheStock() {
        given(ann + [productAdded("pr1", price: "1", stock: 2)])
            .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 2))
            .then([
                productPurchased("pr1", order: "o1", user: "u1", quantity: 2, stock: 0),
                orderPlaced("o1", user: "u1", product: "pr1", quantity: 2, unitPrice: "1.00", totalPrice: "2.00"),
            ])
    }

    @Test func anEmptyProductIsNotAvailable() {
        given(ann + [productAdded("pr1", stock: 0)])
            .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 1))
            .thenError(.productNotAvailable(productId: "pr1"))
        given(
            ann + [
                productAdded("pr1", stock: 1), productPurchased("pr1", order: "o0", user: "u1", quantity: 1, stock: 0),
            ]
        )
        .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 5))
        .thenError(.productNotAvailable(productId: "pr1"))
    }

    @Test func askingForMoreThanIsInStockIsInsufficient() {
        given(ann + [productAdded("pr1", stock: 2)])
            .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 3))
            .thenError(.insufficientStock(productId: "pr1", requested: 3, available: 2))
    }

    @Test func theBuyerMustBeALiveUser() {
        given([productAdded("pr1")])
            .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 1))
            .thenError(.notFound(.user, id: "u1"))
        given(ann + [userDeleted("u1"), emailReleased("ann@example.com", by: "u1"), productAdded("pr1")])
            .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 1))
            .thenError(.notFound(.user, id: "u1"))
    }

    @Test func aMissingOrRemovedProductIsNotFound() {
        given(ann)
            .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 1))
            .thenError(.notFound(.product, id: "pr1"))
        given(ann + [productAdded("pr1"), productRemoved("pr1")])
            .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 1))
            .thenError(.notFound(.product, id: "pr1"))
    }

    @Test func anOrderIdIsUsedOnce() {
        let history =
            ann + registration("u2", email: "bo@example.com") + [productAdded("pr1"), productAdded("pr2")]
            + [
                productPurchased("pr1", order: "o1", user: "u1", quantity: 1, stock: 9),
                orderPlaced("o1", user: "u1", product: "pr1", quantity: 1, unitPrice: "19.99", totalPrice: "19.99"),
            ]
        given(history)
            .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 1))
            .thenError(.alreadyExists(.order, id: "o1"))
        given(history)
            .when(purchaseProduct(order: "o1", user: "u2", product: "pr2", quantity: 1))
            .thenError(.alreadyExists(.order, id: "o1"))
    }

    @Test func checksRunProductThenOrderThenBuyerThenStock() {
        let placed = orderPlaced("o1", user: "u9", product: "pr9", quantity: 1, unitPrice: "1", totalPrice: "1")
        given([placed])
            .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 1))
            .thenError(.notFound(.product, id: "pr1"))
        given([placed, productAdded("pr1", stock: 0)])
            .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 1))
            .thenError(.alreadyExists(.order, id: "o1"))
        given([productAdded("pr1", stock: 0)])
            .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 1))
            .thenError(.notFound(.user, id: "u1"))
    }

    @Test func aTotalTooLargeToRecordIsRefusedNotCrashed() throws {
        // 999,999,999.99 × 1,000,000,000 is about 1e20 cents, beyond Int64: refused, nothing appended.
        given([
            .user(
                .registered(
                    UserRegistered(
                        userId: try UserId("u1"), name: try PersonName("Ann"),
                        email: try EmailAddress("ann@example.com"), gender: .unknown, birthday: nil, subscription: .free
                    ))),
            .product(
                .added(
                    ProductAdded(
                        productId: try ProductId("pr1"), name: try ProductName("Gold"),
                        price: try Money("999999999.99"), category: .electronics, stock: try Stock(1_000_000_000)))),
        ])
        .when(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 1_000_000_000))
        .thenInvalidInput(field: "quantity")
    }

    @Test func theLargestRecordableTotalIsExact() throws {
        #expect(try Money("92233720.36").multiplied(by: Quantity(1_000_000_000)).description == "92233720360000000.00")
        #expect(throws: DomainError.self) { try Money("92233720.37").multiplied(by: Quantity(1_000_000_000)) }
    }
}

@Suite("OrderDecider and order state")
struct OrderDeciderTests {
    let purchase = PurchaseProduct(orderId: .of("o1"), userId: .of("u1"), productId: .of("pr1"), quantity: .of(4))
    let buyer = UserState.live(
        User(
            id: .of("u1"), name: .of("Ann"), email: .of("ann@example.com"), gender: .unknown, birthday: nil,
            subscription: .free))

    @Test func placesAPendingOrderAtTheGivenPrice() throws {
        let events = try OrderDecider.decide(.place(purchase, unitPrice: .of("2.25")), state: .initial, buyer: buyer)
        let expected = OrderPlaced(
            orderId: .of("o1"), userId: .of("u1"), productId: .of("pr1"), quantity: .of(4), unitPrice: .of("2.25"),
            totalPrice: .of("9.00"), status: .pending)
        #expect(events == [.placed(expected)])
        let state = events.reduce(OrderState.initial, OrderDecider.evolve)
        #expect(
            state
                == .placed(
                    Order(
                        id: .of("o1"), userId: .of("u1"), productId: .of("pr1"), quantity: .of(4),
                        unitPrice: .of("2.25"),
                        totalPrice: .of("9.00"), status: .pending)))
        #expect(state.evolved(by: events[0]) == state, "a second placement does not change a placed order")
    }

    @Test func refusesAUsedIdOrAMissingBuyer() {
        let placed = OrderState.placed(
            Order(
                id: .of("o1"), userId: .of("u2"), productId: .of("pr2"), quantity: .of(1), unitPrice: .zero,
                totalPrice: .zero, status: .pending))
        #expect(throws: DomainError.alreadyExists(.order, id: "o1")) {
            try OrderDecider.decide(.place(purchase, unitPrice: .zero), state: placed, buyer: buyer)
        }
        #expect(throws: DomainError.notFound(.user, id: "u1")) {
            try OrderDecider.decide(.place(purchase, unitPrice: .zero), state: .none, buyer: .deleted)
        }
        #expect(throws: DomainError.notFound(.user, id: "u1")) {
            try OrderDecider.decide(.place(purchase, unitPrice: .zero), state: .none, buyer: .unregistered)
        }
    }
}
