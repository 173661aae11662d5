import LogbookDomain
import LogbookJSON

/// The `Projector`'s fast path: turns a stored event straight into its row change from the
/// bytes of its payload, without building a `JSONValue` or a `DomainEvent`.
///
/// It trusts what the log promises about its own payloads: they were checked when they were
/// written (`EventCodec` wrote them, or an upcaster), so the text rules of names, titles,
/// contents and emails are not checked again. It still reads every field the slow path
/// reads, with its JSON type, and everything a row is built from (ids, choices, amounts,
/// dates, quantities, the stream the event is on). It reads only the exact layout the codec
/// writes: fields in the codec's order, canonical JSON. For anything else (another layout, a
/// value it would have to refuse) it answers `.unsupported`, and the `Projector` takes the
/// slow path, which gives the same change or says precisely what is wrong.
enum PayloadProjection {
    enum Outcome: Equatable {
        /// The event's row change (nil: the event changes no row).
        case change(ReadModelChange?)
        /// Not read here: the slow path decides.
        case unsupported
    }

    static func change(_ recorded: RecordedEvent) -> Outcome {
        var data = recorded.data
        return data.withUTF8 { bytes in
            var reader = CanonicalCursor(bytes: bytes)
            guard let change = reader.change(recorded) else { return .unsupported }
            return .change(change)
        }
    }
}

/// Reads one payload in the codec's layout; every step answers nil when the bytes differ.
extension CanonicalCursor {
    fileprivate mutating func change(_ recorded: RecordedEvent) -> ReadModelChange?? {
        let at = Timestamp(millisecondsSinceEpoch: recorded.recordedAt)
        let position = recorded.position
        let stream = recorded.stream
        guard take("{") else { return nil }
        switch recorded.type {
        case "UserRegistered":
            guard let userId: UserId = id("userId", first: true, stream: stream, "user-"),
                let name = string("name"), let email = string("email"), let gender: Gender = choice("gender")
            else { return nil }
            guard let birthday = optionalBirthday("birthday"), let subscription: Subscription = choice("subscription"),
                end()
            else { return nil }
            return .some(
                .insertUser(
                    UserView(
                        userId: userId, name: name, email: email, gender: gender, birthday: birthday,
                        subscription: subscription, registeredAt: at, updatedAt: at), position: position))
        case "UserProfileUpdated":
            guard let userId: UserId = id("userId", first: true, stream: stream, "user-"),
                let name = optionalString("name"), let email = optionalString("email"),
                let gender: Gender? = optionalChoice("gender"), let birthday = optionalBirthday("birthday"), end()
            else { return nil }
            return .some(
                .updateUser(
                    userId,
                    UserChanges(
                        name: name, email: email, gender: gender, birthday: birthday, updatedAt: at)))
        case "SubscriptionChanged":
            guard let userId: UserId = id("userId", first: true, stream: stream, "user-"),
                let _: Subscription = choice("from"), let to: Subscription = choice("to"), end()
            else { return nil }
            return .some(.updateUser(userId, UserChanges(subscription: to, updatedAt: at)))
        case "UserDeleted":
            guard let userId: UserId = id("userId", first: true, stream: stream, "user-"), end() else { return nil }
            return .some(.removeUser(userId))
        case "PostCreated":
            guard let postId: PostId = id("postId", first: true, stream: stream, "post-"),
                let authorId: UserId = id("authorId"), let title = string("title"), let content = string("content"),
                end()
            else { return nil }
            return .some(
                .insertPost(
                    PostView(
                        postId: postId, authorId: authorId, title: title, content: content, createdAt: at,
                        updatedAt: at), position: position))
        case "PostEdited":
            guard let postId: PostId = id("postId", first: true, stream: stream, "post-"),
                let title = optionalString("title"), let content = optionalString("content"), end()
            else { return nil }
            return .some(.updatePost(postId, PostChanges(title: title, content: content, updatedAt: at)))
        case "PostDeleted":
            guard let postId: PostId = id("postId", first: true, stream: stream, "post-"), end() else { return nil }
            return .some(.removePost(postId))
        case "ProductAdded":
            guard let productId: ProductId = id("productId", first: true, stream: stream, "product-"),
                let name = string("name"), let price = money("price"),
                let category: ProductCategory = choice("category"), let stock = integer("stock"),
                (try? Stock(stock)) != nil, end()
            else { return nil }
            return .some(
                .insertProduct(
                    ProductView(
                        productId: productId, name: name, price: price, category: category, stock: stock,
                        updatedAt: at), position: position))
        case "ProductUpdated":
            guard let productId: ProductId = id("productId", first: true, stream: stream, "product-"),
                let name = optionalString("name"), let price = optionalMoney("price"),
                let category: ProductCategory? = optionalChoice("category"), end()
            else { return nil }
            return .some(
                .updateProduct(
                    productId,
                    ProductChanges(name: name, price: price, category: category, updatedAt: at)))
        case "ProductRestocked":
            guard let productId: ProductId = id("productId", first: true, stream: stream, "product-"),
                let quantity = integer("quantity"), (try? Quantity(quantity)) != nil, let stock = integer("stock"),
                (try? Stock(stock)) != nil, end()
            else { return nil }
            return .some(.updateProduct(productId, ProductChanges(stock: stock, updatedAt: at)))
        case "ProductRemoved":
            guard let productId: ProductId = id("productId", first: true, stream: stream, "product-"), end() else {
                return nil
            }
            return .some(.removeProduct(productId))
        case "ProductPurchased":
            guard let productId: ProductId = id("productId", first: true, stream: stream, "product-"),
                let _: OrderId = id("orderId"), let _: UserId = id("userId"), let quantity = integer("quantity"),
                (try? Quantity(quantity)) != nil, let stock = integer("stock"), (try? Stock(stock)) != nil, end()
            else { return nil }
            return .some(.updateProduct(productId, ProductChanges(stock: stock, updatedAt: at)))
        case "OrderPlaced":
            guard let orderId: OrderId = id("orderId", first: true, stream: stream, "order-"),
                let userId: UserId = id("userId"), let productId: ProductId = id("productId"),
                let quantity = integer("quantity"), (try? Quantity(quantity)) != nil,
                let unitPrice = money("unitPrice"), let totalPrice = money("totalPrice"),
                let status: OrderStatus = choice("status"), end()
            else { return nil }
            return .some(
                .insertOrder(
                    OrderView(
                        orderId: orderId, userId: userId, productId: productId, quantity: quantity,
                        unitPrice: unitPrice, totalPrice: totalPrice, status: status, placedAt: at),
                    position: position))
        default:
            return nil
        }
    }

    // MARK: Fields

    /// A required identifier; with `stream`, the first field, whose id names the stream the
    /// event must be on (`prefix` + id).
    fileprivate mutating func id<Kind>(
        _ key: StaticString, first: Bool = false, stream: String? = nil, _ prefix: StaticString = ""
    )
        -> Identifier<Kind>?
    {
        guard self.key(key, first: first), let raw = string(), let id = try? Identifier<Kind>(raw) else {
            return nil
        }
        if let stream, !Self.stream(stream, is: prefix, raw) { return nil }
        return id
    }

    fileprivate mutating func string(_ key: StaticString) -> String? {
        guard self.key(key) else { return nil }
        return string()
    }

    /// An optional string: `.some(nil)` when the field is absent, nil when it is not readable.
    fileprivate mutating func optionalString(_ key: StaticString) -> String?? {
        guard self.key(key) else { return .some(nil) }
        guard let text = string() else { return nil }
        return .some(text)
    }

    fileprivate mutating func choice<Choice: WireChoice>(_ key: StaticString) -> Choice? {
        string(key).flatMap(Choice.init(rawValue:))
    }

    fileprivate mutating func optionalChoice<Choice: WireChoice>(_ key: StaticString) -> Choice?? {
        guard let text = optionalString(key) else { return nil }
        guard let raw = text else { return .some(nil) }
        return Choice(rawValue: raw).map { .some($0) }
    }

    fileprivate mutating func money(_ key: StaticString) -> Money? {
        string(key).flatMap { try? Money(recorded: $0) }
    }

    fileprivate mutating func optionalMoney(_ key: StaticString) -> Money?? {
        guard let text = optionalString(key) else { return nil }
        guard let raw = text else { return .some(nil) }
        guard let money = try? Money(recorded: raw) else { return nil }
        return .some(money)
    }

    fileprivate mutating func optionalBirthday(_ key: StaticString) -> Birthday?? {
        guard let text = optionalString(key) else { return nil }
        guard let raw = text else { return .some(nil) }
        guard let birthday = try? Birthday(recorded: raw) else { return nil }
        return .some(birthday)
    }

    fileprivate mutating func integer(_ key: StaticString) -> Int? {
        guard self.key(key) else { return nil }
        return integer()
    }

    // MARK: Layout

    /// Consumes `,"key":` (or `"key":` for the first field) when it is next.
    fileprivate mutating func key(_ key: StaticString, first: Bool = false) -> Bool {
        let start = index
        guard first || take(","), take("\""), take(key), take("\":") else {
            index = start
            return false
        }
        return true
    }

    fileprivate mutating func end() -> Bool { take("}") && index == bytes.count }

    /// True when `stream` is exactly `prefix` followed by `id`.
    fileprivate static func stream(_ stream: String, is prefix: StaticString, _ id: String) -> Bool {
        let name = stream.utf8
        let count = prefix.utf8CodeUnitCount
        guard name.count == count + id.utf8.count else { return false }
        let prefixMatches = prefix.withUTF8Buffer { expected in name.prefix(count).elementsEqual(expected) }
        return prefixMatches && name.dropFirst(count).elementsEqual(id.utf8)
    }
}
