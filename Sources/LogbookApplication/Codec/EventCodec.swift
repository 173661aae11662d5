public import LogbookDomain
public import LogbookJSON

/// Translates domain events to and from their JSON payloads (the `data` of an envelope).
/// The field names are the public contract of ARCHITECTURE §4 and `schemas/`.
public enum EventCodec {
    /// The payload of `event` as a JSON object, fields in a stable order.
    public static func encode(_ event: DomainEvent) -> JSONObject {
        var o = JSONObject()
        o.reserveCapacity(7)  // the most fields of any event (OrderPlaced)
        switch event {
        case .user(.registered(let e)):
            o["userId"] = .string(e.userId.rawValue)
            o["name"] = .string(e.name.value)
            o["email"] = .string(e.email.value)
            o["gender"] = .string(e.gender.rawValue)
            o["birthday"] = e.birthday.map { .string($0.description) }
            o["subscription"] = .string(e.subscription.rawValue)
        case .user(.profileUpdated(let e)):
            o["userId"] = .string(e.userId.rawValue)
            o["name"] = e.name.map { .string($0.value) }
            o["email"] = e.email.map { .string($0.value) }
            o["gender"] = e.gender.map { .string($0.rawValue) }
            o["birthday"] = e.birthday.map { .string($0.description) }
        case .user(.subscriptionChanged(let e)):
            o["userId"] = .string(e.userId.rawValue)
            o["from"] = .string(e.from.rawValue)
            o["to"] = .string(e.to.rawValue)
        case .user(.deleted(let e)):
            o["userId"] = .string(e.userId.rawValue)
        case .user(.forgotten(let e)):
            o["userId"] = .string(e.userId.rawValue)
        case .user(.erased(let e)):
            o["userId"] = .string(e.userId.rawValue)
            o[forgottenField] = .bool(true)
        case .emailClaim(.claimed(let e)):
            o["email"] = .string(e.email.value)
            o["userId"] = .string(e.userId.rawValue)
        case .emailClaim(.released(let e)):
            o["email"] = .string(e.email.value)
            o["userId"] = .string(e.userId.rawValue)
        case .emailClaim(.forgotten(let e)):
            o["email"] = .null
            o["userId"] = .string(e.userId.rawValue)
            o[forgottenField] = .bool(true)
        case .post(.created(let e)):
            o["postId"] = .string(e.postId.rawValue)
            o["authorId"] = .string(e.authorId.rawValue)
            o["title"] = .string(e.title.value)
            o["content"] = .string(e.content.value)
        case .post(.edited(let e)):
            o["postId"] = .string(e.postId.rawValue)
            o["title"] = e.title.map { .string($0.value) }
            o["content"] = e.content.map { .string($0.value) }
        case .post(.deleted(let e)):
            o["postId"] = .string(e.postId.rawValue)
        case .product(.added(let e)):
            o["productId"] = .string(e.productId.rawValue)
            o["name"] = .string(e.name.value)
            o["price"] = .string(e.price.description)
            o["category"] = .string(e.category.rawValue)
            o["stock"] = .int(e.stock.value)
        case .product(.updated(let e)):
            o["productId"] = .string(e.productId.rawValue)
            o["name"] = e.name.map { .string($0.value) }
            o["price"] = e.price.map { .string($0.description) }
            o["category"] = e.category.map { .string($0.rawValue) }
        case .product(.restocked(let e)):
            o["productId"] = .string(e.productId.rawValue)
            o["quantity"] = .int(e.quantity.value)
            o["stock"] = .int(e.stock.value)
        case .product(.removed(let e)):
            o["productId"] = .string(e.productId.rawValue)
        case .product(.purchased(let e)):
            o["productId"] = .string(e.productId.rawValue)
            o["orderId"] = .string(e.orderId.rawValue)
            o["userId"] = .string(e.userId.rawValue)
            o["quantity"] = .int(e.quantity.value)
            o["stock"] = .int(e.stock.value)
        case .order(.placed(let e)):
            o["orderId"] = .string(e.orderId.rawValue)
            o["userId"] = .string(e.userId.rawValue)
            o["productId"] = .string(e.productId.rawValue)
            o["quantity"] = .int(e.quantity.value)
            o["unitPrice"] = .string(e.unitPrice.description)
            o["totalPrice"] = .string(e.totalPrice.description)
            o["status"] = .string(e.status.rawValue)
        }
        return o
    }

    /// The member a payload whose personal values were forgotten ends in (`true`).
    public static let forgottenField = "forgotten"

    /// The payload as JSON text, as the log stores it.
    public static func encodedText(_ event: DomainEvent) -> String {
        JSONWriter.string(.object(encode(event)))
    }

    /// Reads a stored event back into the domain. Throws when the type is unknown or the
    /// payload does not hold valid values (a damaged or foreign log). `stream` is the
    /// stream the event is on: an email claim's bucket is its name, not in its payload.
    public static func decode(type: String, stream: String, data: String) throws(EventDecodingError)
        -> DomainEvent
    {
        let json: JSONValue
        do {
            json = try JSONParser.parse(data)
        } catch {
            throw EventDecodingError(type: type, reason: "payload is not JSON: \(error)")
        }
        do {
            return try decode(type: type, stream: stream, json: json)
        } catch {
            throw EventDecodingError(type: type, reason: error.message)
        }
    }

    /// Reads a recorded event back into the domain.
    public static func decode(_ event: RecordedEvent) throws(EventDecodingError) -> DomainEvent {
        try decode(type: event.type, stream: event.stream, data: event.data)
    }

    /// True when `json` is a payload whose personal values were forgotten.
    static func isForgotten(_ json: JSONValue) -> Bool {
        if case .bool(true)? = json.objectValue?[forgottenField] { true } else { false }
    }

    static func decode(type: String, stream: String, json: JSONValue) throws(DomainError) -> DomainEvent {
        if isForgotten(json), ["UserRegistered", "UserProfileUpdated"].contains(type) {
            let f = try FieldReader(
                json, allowed: ["userId", "name", "email", "gender", "birthday", "subscription", forgottenField])
            return .user(.erased(ErasedUserEvent(userId: try f.value("userId", UserId.init), typeName: type)))
        }
        switch type {
        case "UserRegistered":
            let f = try FieldReader(json, allowed: ["userId", "name", "email", "gender", "birthday", "subscription"])
            return .user(
                .registered(
                    UserRegistered(
                        userId: try f.value("userId", UserId.init), name: try f.value("name", PersonName.init),
                        email: try f.value("email", EmailAddress.init), gender: try f.value("gender", Gender.parse),
                        birthday: try f.optionalValue("birthday", Birthday.init(recorded:field:)),
                        subscription: try f.value("subscription", Subscription.parse))))
        case "UserProfileUpdated":
            let f = try FieldReader(json, allowed: ["userId", "name", "email", "gender", "birthday"])
            return .user(
                .profileUpdated(
                    UserProfileUpdated(
                        userId: try f.value("userId", UserId.init), name: try f.optionalValue("name", PersonName.init),
                        email: try f.optionalValue("email", EmailAddress.init),
                        gender: try f.optionalValue("gender", Gender.parse),
                        birthday: try f.optionalValue("birthday", Birthday.init(recorded:field:)))))
        case "SubscriptionChanged":
            let f = try FieldReader(json, allowed: ["userId", "from", "to"])
            return .user(
                .subscriptionChanged(
                    SubscriptionChanged(
                        userId: try f.value("userId", UserId.init), from: try f.value("from", Subscription.parse),
                        to: try f.value("to", Subscription.parse))))
        case "UserDeleted":
            let f = try FieldReader(json, allowed: ["userId"])
            return .user(.deleted(UserDeleted(userId: try f.value("userId", UserId.init))))
        case "UserForgotten":
            let f = try FieldReader(json, allowed: ["userId"])
            return .user(.forgotten(UserForgotten(userId: try f.value("userId", UserId.init))))
        case "EmailClaimed", "EmailReleased":
            guard case .email(let bucket)? = StreamId(name: stream) else {
                throw .invalidInput(field: "stream", reason: "an email claim belongs on a stream email-<bucket>")
            }
            if isForgotten(json) {
                let f = try FieldReader(json, allowed: ["email", "userId", forgottenField])
                return .emailClaim(
                    .forgotten(
                        ForgottenEmailClaim(bucket: bucket, userId: try f.value("userId", UserId.init), typeName: type))
                )
            }
            let f = try FieldReader(json, allowed: ["email", "userId"])
            let email = try f.value("email", NormalizedEmail.init(normalized:field:))
            let userId = try f.value("userId", UserId.init)
            return type == "EmailClaimed"
                ? .emailClaim(.claimed(EmailClaimed(bucket: bucket, email: email, userId: userId)))
                : .emailClaim(.released(EmailReleased(bucket: bucket, email: email, userId: userId)))
        case "PostCreated":
            let f = try FieldReader(json, allowed: ["postId", "authorId", "title", "content"])
            return .post(
                .created(
                    PostCreated(
                        postId: try f.value("postId", PostId.init), authorId: try f.value("authorId", UserId.init),
                        title: try f.value("title", PostTitle.init), content: try f.value("content", PostContent.init)))
            )
        case "PostEdited":
            let f = try FieldReader(json, allowed: ["postId", "title", "content"])
            return .post(
                .edited(
                    PostEdited(
                        postId: try f.value("postId", PostId.init), title: try f.optionalValue("title", PostTitle.init),
                        content: try f.optionalValue("content", PostContent.init))))
        case "PostDeleted":
            let f = try FieldReader(json, allowed: ["postId"])
            return .post(.deleted(PostDeleted(postId: try f.value("postId", PostId.init))))
        case "ProductAdded":
            let f = try FieldReader(json, allowed: ["productId", "name", "price", "category", "stock"])
            return .product(
                .added(
                    ProductAdded(
                        productId: try f.value("productId", ProductId.init),
                        name: try f.value("name", ProductName.init),
                        price: try f.value("price", Money.init(recorded:field:)),
                        category: try f.value("category", ProductCategory.parse),
                        stock: try f.value("stock", Stock.init))))
        case "ProductUpdated":
            let f = try FieldReader(json, allowed: ["productId", "name", "price", "category"])
            return .product(
                .updated(
                    ProductUpdated(
                        productId: try f.value("productId", ProductId.init),
                        name: try f.optionalValue("name", ProductName.init),
                        price: try f.optionalValue("price", Money.init(recorded:field:)),
                        category: try f.optionalValue("category", ProductCategory.parse))))
        case "ProductRestocked":
            let f = try FieldReader(json, allowed: ["productId", "quantity", "stock"])
            return .product(
                .restocked(
                    ProductRestocked(
                        productId: try f.value("productId", ProductId.init),
                        quantity: try f.value("quantity", Quantity.init),
                        stock: try f.value("stock", Stock.init))))
        case "ProductRemoved":
            let f = try FieldReader(json, allowed: ["productId"])
            return .product(.removed(ProductRemoved(productId: try f.value("productId", ProductId.init))))
        case "ProductPurchased":
            let f = try FieldReader(json, allowed: ["productId", "orderId", "userId", "quantity", "stock"])
            return .product(
                .purchased(
                    ProductPurchased(
                        productId: try f.value("productId", ProductId.init),
                        orderId: try f.value("orderId", OrderId.init),
                        userId: try f.value("userId", UserId.init), quantity: try f.value("quantity", Quantity.init),
                        stock: try f.value("stock", Stock.init))))
        case "OrderPlaced":
            let f = try FieldReader(
                json, allowed: ["orderId", "userId", "productId", "quantity", "unitPrice", "totalPrice", "status"])
            return .order(
                .placed(
                    OrderPlaced(
                        orderId: try f.value("orderId", OrderId.init), userId: try f.value("userId", UserId.init),
                        productId: try f.value("productId", ProductId.init),
                        quantity: try f.value("quantity", Quantity.init),
                        unitPrice: try f.value("unitPrice", Money.init(recorded:field:)),
                        totalPrice: try f.value("totalPrice", Money.init(recorded:field:)),
                        status: try f.value("status", OrderStatus.parse))))
        default:
            throw .invalidInput(field: "type", reason: "unknown event type '\(type)'")
        }
    }
}
