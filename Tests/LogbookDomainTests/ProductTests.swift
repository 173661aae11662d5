import LogbookDomain
import Testing

@Suite("Products")
struct ProductTests {
    @Test func addingAProduct() {
        given([])
            .when(addProduct("pr1", name: " Tea ", price: "3.5", category: .food, stock: 0))
            .then([productAdded("pr1", name: "Tea", price: "3.50", category: .food, stock: 0)])
    }

    @Test func aProductIdIsUsedOnceEvenAfterRemoval() {
        given([productAdded("pr1")]).when(addProduct("pr1")).thenError(.alreadyExists(.product, id: "pr1"))
        given([productAdded("pr1"), productRemoved("pr1")])
            .when(addProduct("pr1"))
            .thenError(.alreadyExists(.product, id: "pr1"))
    }

    @Test func updatingRecordsOnlyTheChangedFields() {
        given([productAdded("pr1", name: "Widget", price: "19.99", category: .electronics)])
            .when(updateProduct("pr1", name: "Widget", price: "17.5", category: .electronics))
            .then([productUpdated("pr1", price: "17.50")])
        given([productAdded("pr1", name: "Widget", price: "19.99", category: .electronics)])
            .when(updateProduct("pr1", name: "Gadget", category: .clothing))
            .then([productUpdated("pr1", name: "Gadget", category: .clothing)])
    }

    @Test func updatingWithUnchangedFieldsRecordsNothing() {
        given([productAdded("pr1", name: "Widget", price: "19.90", category: .food)])
            .when(updateProduct("pr1", name: "Widget ", price: "19.9", category: .food))
            .thenNothingHappens()
    }

    @Test func anUpdateWithNoFieldsCannotBeBuilt() {
        #expect(throws: DomainError.invalidInput(field: "data", reason: "give at least one of name, price, category")) {
            try UpdateProduct(productId: .of("pr1"))
        }
    }

    @Test func restockingAddsToTheStock() {
        given([productAdded("pr1", stock: 0)])
            .when(restockProduct("pr1", quantity: 5))
            .then([productRestocked("pr1", quantity: 5, stock: 5)])
        given([productAdded("pr1", stock: 2), productRestocked("pr1", quantity: 5, stock: 7)])
            .when(restockProduct("pr1", quantity: 1))
            .then([productRestocked("pr1", quantity: 1, stock: 8)])
    }

    @Test func restockingPastTheMaximumIsInvalid() {
        given([productAdded("pr1", stock: 999_999_999)])
            .when(restockProduct("pr1", quantity: 1))
            .then([productRestocked("pr1", quantity: 1, stock: 1_000_000_000)])
        given([productAdded("pr1", stock: 999_999_999)])
            .when(restockProduct("pr1", quantity: 2))
            .thenInvalidInput(field: "quantity")
        given([productAdded("pr1", stock: 1_000_000_000)])
            .when(restockProduct("pr1", quantity: 1_000_000_000))
            .thenInvalidInput(field: "quantity")
    }

    @Test func removingAProduct() {
        given([productAdded("pr1")]).when(removeProduct("pr1")).then([productRemoved("pr1")])
    }

    @Test(arguments: [
        updateProduct("pr1", name: "x"), restockProduct("pr1", quantity: 1), removeProduct("pr1"),
    ])
    func aMissingOrRemovedProductIsNotFound(_ command: Command) {
        given([]).when(command).thenError(.notFound(.product, id: "pr1"))
        given([productAdded("pr1"), productRemoved("pr1")]).when(command).thenError(.notFound(.product, id: "pr1"))
    }
}

@Suite("ProductDecider and product state")
struct ProductDeciderTests {
    let widget = Product(id: .of("pr1"), name: .of("Widget"), price: .of("2.50"), category: .clothing, stock: .of(3))

    @Test func isAvailableWhileInStock() {
        #expect(widget.isAvailable)
        var empty = widget
        empty.stock = .empty
        #expect(!empty.isAvailable)
    }

    @Test func purchaseAloneRecordsOnlyTheProductSide() throws {
        let purchase = PurchaseProduct(orderId: .of("o1"), userId: .of("u1"), productId: .of("pr1"), quantity: .of(3))
        #expect(
            try ProductDecider.decide(.purchase(purchase), state: .live(widget))
                == [
                    .purchased(
                        ProductPurchased(
                            productId: .of("pr1"), orderId: .of("o1"), userId: .of("u1"), quantity: .of(3),
                            stock: .empty))
                ])
    }

    @Test func purchaseChecksAvailabilityThenQuantity() {
        let purchase = { (quantity: Int) in
            ProductCommand.purchase(
                PurchaseProduct(orderId: .of("o1"), userId: .of("u1"), productId: .of("pr1"), quantity: .of(quantity)))
        }
        var empty = widget
        empty.stock = .empty
        #expect(throws: DomainError.productNotAvailable(productId: "pr1")) {
            try ProductDecider.decide(purchase(4), state: .live(empty))
        }
        #expect(throws: DomainError.insufficientStock(productId: "pr1", requested: 4, available: 3)) {
            try ProductDecider.decide(purchase(4), state: .live(widget))
        }
        #expect(throws: DomainError.notFound(.product, id: "pr1")) {
            try ProductDecider.decide(purchase(1), state: .removed)
        }
    }

    @Test func evolvingFollowsTheLifecycle() {
        var state = ProductState.initial
        #expect(state.liveProduct == nil)
        state = ProductDecider.evolve(
            state,
            .added(
                ProductAdded(
                    productId: .of("pr1"), name: .of("Widget"), price: .of("2.50"), category: .clothing, stock: .of(3)))
        )
        #expect(state.liveProduct == widget)
        state = ProductDecider.evolve(state, .updated(ProductUpdated(productId: .of("pr1"), price: .of("3"))))
        #expect(state.liveProduct?.price == Money.of("3.00"))
        #expect(state.liveProduct?.name == widget.name, "absent fields stay")
        state = ProductDecider.evolve(
            state, .restocked(ProductRestocked(productId: .of("pr1"), quantity: .of(4), stock: .of(7))))
        #expect(state.liveProduct?.stock == Stock.of(7))
        state = ProductDecider.evolve(
            state,
            .purchased(
                ProductPurchased(
                    productId: .of("pr1"), orderId: .of("o1"), userId: .of("u1"), quantity: .of(7), stock: .empty)))
        #expect(state.liveProduct?.stock == Stock.empty)
        state = ProductDecider.evolve(state, .removed(ProductRemoved(productId: .of("pr1"))))
        #expect(state == .removed)
        #expect(
            state.evolved(by: .restocked(ProductRestocked(productId: .of("pr1"), quantity: .of(1), stock: .of(1))))
                == .removed)
    }
}
