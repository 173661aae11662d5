public import LogbookDomain
public import LogbookJSON

/// Turns a command's wire `type` and `data` into a domain command with valid values.
/// Unknown types answer `unknown_type`; bad fields answer `invalid_input` naming the field.
public enum CommandParser {
    /// Every command type the service accepts, as spelled on the wire.
    public static let commandTypes: [String] = [
        "RegisterUser", "UpdateUserProfile", "ChangeSubscription", "DeleteUser", "ForgetUser",
        "CreatePost", "EditPost", "DeletePost",
        "AddProduct", "UpdateProduct", "RestockProduct", "RemoveProduct", "PurchaseProduct",
    ]

    /// - Parameter today: the current UTC date, against which birthdays are checked.
    public static func parse(type: String, data: JSONValue, today: CalendarDate) throws(ServiceError) -> Command {
        let command: Command?
        do {
            command = try parseValidated(type: type, data: data, today: today)
        } catch {
            throw ServiceError(error)
        }
        guard let command else {
            let known = commandTypes.joined(separator: ", ")
            throw ServiceError(
                .unknownType, "unknown command type '\(type)' (known: \(known))", details: [("type", .string(type))])
        }
        return command
    }

    /// The command, or nil when `type` names no command.
    private static func parseValidated(type: String, data: JSONValue, today: CalendarDate) throws(DomainError)
        -> Command?
    {
        let birthday: (String, String) throws(DomainError) -> Birthday = { raw, field throws(DomainError) in
            try Birthday(raw, today: today, field: field)
        }
        switch type {
        case "RegisterUser":
            let f = try FieldReader(data, allowed: ["userId", "name", "email", "gender", "birthday", "subscription"])
            return .user(
                .register(
                    RegisterUser(
                        userId: try f.value("userId", UserId.init), name: try f.value("name", PersonName.init),
                        email: try f.value("email", EmailAddress.init),
                        gender: try f.optionalValue("gender", Gender.parse) ?? .unknown,
                        birthday: try f.optionalValue("birthday", birthday),
                        subscription: try f.optionalValue("subscription", Subscription.parse) ?? .free)))
        case "UpdateUserProfile":
            let f = try FieldReader(data, allowed: ["userId", "name", "email", "gender", "birthday"])
            return .user(
                .updateProfile(
                    try UpdateUserProfile(
                        userId: try f.value("userId", UserId.init), name: try f.optionalValue("name", PersonName.init),
                        email: try f.optionalValue("email", EmailAddress.init),
                        gender: try f.optionalValue("gender", Gender.parse),
                        birthday: try f.optionalValue("birthday", birthday))))
        case "ChangeSubscription":
            let f = try FieldReader(data, allowed: ["userId", "subscription"])
            return .user(
                .changeSubscription(
                    ChangeSubscription(
                        userId: try f.value("userId", UserId.init),
                        subscription: try f.value("subscription", Subscription.parse))))
        case "DeleteUser":
            let f = try FieldReader(data, allowed: ["userId"])
            return .user(.delete(DeleteUser(userId: try f.value("userId", UserId.init))))
        case "ForgetUser":
            let f = try FieldReader(data, allowed: ["userId"])
            return .user(.forget(ForgetUser(userId: try f.value("userId", UserId.init))))
        case "CreatePost":
            let f = try FieldReader(data, allowed: ["postId", "authorId", "title", "content"])
            return .post(
                .create(
                    CreatePost(
                        postId: try f.value("postId", PostId.init), authorId: try f.value("authorId", UserId.init),
                        title: try f.value("title", PostTitle.init), content: try f.value("content", PostContent.init)))
            )
        case "EditPost":
            let f = try FieldReader(data, allowed: ["postId", "title", "content"])
            return .post(
                .edit(
                    try EditPost(
                        postId: try f.value("postId", PostId.init), title: try f.optionalValue("title", PostTitle.init),
                        content: try f.optionalValue("content", PostContent.init))))
        case "DeletePost":
            let f = try FieldReader(data, allowed: ["postId"])
            return .post(.delete(DeletePost(postId: try f.value("postId", PostId.init))))
        case "AddProduct":
            let f = try FieldReader(data, allowed: ["productId", "name", "price", "category", "stock"])
            return .product(
                .add(
                    AddProduct(
                        productId: try f.value("productId", ProductId.init),
                        name: try f.value("name", ProductName.init),
                        price: try f.value("price", Money.init(_:field:)),
                        category: try f.value("category", ProductCategory.parse),
                        stock: try f.value("stock", Stock.init))))
        case "UpdateProduct":
            let f = try FieldReader(data, allowed: ["productId", "name", "price", "category"])
            return .product(
                .update(
                    try UpdateProduct(
                        productId: try f.value("productId", ProductId.init),
                        name: try f.optionalValue("name", ProductName.init),
                        price: try f.optionalValue("price", Money.init(_:field:)),
                        category: try f.optionalValue("category", ProductCategory.parse))))
        case "RestockProduct":
            let f = try FieldReader(data, allowed: ["productId", "quantity"])
            return .product(
                .restock(
                    RestockProduct(
                        productId: try f.value("productId", ProductId.init),
                        quantity: try f.value("quantity", Quantity.init))))
        case "RemoveProduct":
            let f = try FieldReader(data, allowed: ["productId"])
            return .product(.remove(RemoveProduct(productId: try f.value("productId", ProductId.init))))
        case "PurchaseProduct":
            let f = try FieldReader(data, allowed: ["orderId", "userId", "productId", "quantity"])
            return .product(
                .purchase(
                    PurchaseProduct(
                        orderId: try f.value("orderId", OrderId.init), userId: try f.value("userId", UserId.init),
                        productId: try f.value("productId", ProductId.init),
                        quantity: try f.value("quantity", Quantity.init))))
        default:
            return nil
        }
    }
}
