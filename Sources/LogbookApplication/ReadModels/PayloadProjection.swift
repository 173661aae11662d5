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

    /// The fields of a stored event the fast path reads, as bytes: the stream's and the
    /// type's text and the payload's JSON.
    struct EventBytes {
        var position: Int64
        /// Milliseconds since the Unix epoch, UTC.
        var recordedAt: Int64
        var stream: UnsafeBufferPointer<UInt8>
        var type: UnsafeBufferPointer<UInt8>
        var data: UnsafeBufferPointer<UInt8>
    }

    static func change(_ recorded: RecordedEvent) -> Outcome {
        var stream = recorded.stream
        var type = recorded.type
        var data = recorded.data
        return stream.withUTF8 { stream in
            type.withUTF8 { type in
                data.withUTF8 { data in
                    change(
                        EventBytes(
                            position: recorded.position, recordedAt: recorded.recordedAt, stream: stream, type: type,
                            data: data))
                }
            }
        }
    }

    static func change(_ event: EventBytes) -> Outcome {
        guard let type = PayloadType(event.type) else { return .unsupported }
        var reader = CanonicalCursor(bytes: event.data)
        guard let change = reader.change(type, event) else { return .unsupported }
        return .change(change)
    }
}

/// The event types with read models, told from the type's bytes.
private enum PayloadType: CaseIterable {
    case userRegistered, userProfileUpdated, subscriptionChanged, userDeleted
    case postCreated, postEdited, postDeleted
    case productAdded, productUpdated, productRestocked, productRemoved, productPurchased
    case orderPlaced

    var name: StaticString {
        switch self {
        case .userRegistered: "UserRegistered"
        case .userProfileUpdated: "UserProfileUpdated"
        case .subscriptionChanged: "SubscriptionChanged"
        case .userDeleted: "UserDeleted"
        case .postCreated: "PostCreated"
        case .postEdited: "PostEdited"
        case .postDeleted: "PostDeleted"
        case .productAdded: "ProductAdded"
        case .productUpdated: "ProductUpdated"
        case .productRestocked: "ProductRestocked"
        case .productRemoved: "ProductRemoved"
        case .productPurchased: "ProductPurchased"
        case .orderPlaced: "OrderPlaced"
        }
    }

    init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        for type in Self.allCases where type.name.utf8CodeUnitCount == bytes.count {
            let matches = type.name.withUTF8Buffer { name in name.elementsEqual(bytes) }
            if matches {
                self = type
                return
            }
        }
        return nil
    }
}

/// Reads one payload in the codec's layout; every step answers nil when the bytes differ.
extension CanonicalCursor {
    fileprivate mutating func change(_ type: PayloadType, _ event: PayloadProjection.EventBytes) -> ReadModelChange?? {
        let at = Timestamp(millisecondsSinceEpoch: event.recordedAt)
        let position = event.position
        let stream = event.stream
        guard take("{") else { return nil }
        switch type {
        case .userRegistered:
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
        case .userProfileUpdated:
            guard let userId: UserId = id("userId", first: true, stream: stream, "user-"),
                let name = optionalString("name"), let email = optionalString("email"),
                let gender: Gender? = optionalChoice("gender"), let birthday = optionalBirthday("birthday"), end()
            else { return nil }
            return .some(
                .updateUser(
                    userId,
                    UserChanges(
                        name: name, email: email, gender: gender, birthday: birthday, updatedAt: at)))
        case .subscriptionChanged:
            guard let userId: UserId = id("userId", first: true, stream: stream, "user-"),
                let _: Subscription = choice("from"), let to: Subscription = choice("to"), end()
            else { return nil }
            return .some(.updateUser(userId, UserChanges(subscription: to, updatedAt: at)))
        case .userDeleted:
            guard let userId: UserId = id("userId", first: true, stream: stream, "user-"), end() else { return nil }
            return .some(.removeUser(userId))
        case .postCreated:
            guard let postId: PostId = id("postId", first: true, stream: stream, "post-"),
                let authorId: UserId = id("authorId"), let title = string("title"), let content = string("content"),
                end()
            else { return nil }
            return .some(
                .insertPost(
                    PostView(
                        postId: postId, authorId: authorId, title: title, content: content, createdAt: at,
                        updatedAt: at), position: position))
        case .postEdited:
            guard let postId: PostId = id("postId", first: true, stream: stream, "post-"),
                let title = optionalString("title"), let content = optionalString("content"), end()
            else { return nil }
            return .some(.updatePost(postId, PostChanges(title: title, content: content, updatedAt: at)))
        case .postDeleted:
            guard let postId: PostId = id("postId", first: true, stream: stream, "post-"), end() else { return nil }
            return .some(.removePost(postId))
        case .productAdded:
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
        case .productUpdated:
            guard let productId: ProductId = id("productId", first: true, stream: stream, "product-"),
                let name = optionalString("name"), let price = optionalMoney("price"),
                let category: ProductCategory? = optionalChoice("category"), end()
            else { return nil }
            return .some(
                .updateProduct(
                    productId,
                    ProductChanges(name: name, price: price, category: category, updatedAt: at)))
        case .productRestocked:
            guard let productId: ProductId = id("productId", first: true, stream: stream, "product-"),
                let quantity = integer("quantity"), (try? Quantity(quantity)) != nil, let stock = integer("stock"),
                (try? Stock(stock)) != nil, end()
            else { return nil }
            return .some(.updateProduct(productId, ProductChanges(stock: stock, updatedAt: at)))
        case .productRemoved:
            guard let productId: ProductId = id("productId", first: true, stream: stream, "product-"), end() else {
                return nil
            }
            return .some(.removeProduct(productId))
        case .productPurchased:
            guard let productId: ProductId = id("productId", first: true, stream: stream, "product-"),
                let _: OrderId = id("orderId"), let _: UserId = id("userId"), let quantity = integer("quantity"),
                (try? Quantity(quantity)) != nil, let stock = integer("stock"), (try? Stock(stock)) != nil, end()
            else { return nil }
            return .some(.updateProduct(productId, ProductChanges(stock: stock, updatedAt: at)))
        case .orderPlaced:
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
        }
    }

    // MARK: Fields

    /// A required identifier; with `stream`, the first field, whose id names the stream the
    /// event must be on (`prefix` + id).
    fileprivate mutating func id<Kind>(
        _ key: StaticString, first: Bool = false, stream: UnsafeBufferPointer<UInt8>? = nil,
        _ prefix: StaticString = ""
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
    fileprivate static func stream(_ stream: UnsafeBufferPointer<UInt8>, is prefix: StaticString, _ id: String) -> Bool
    {
        let count = prefix.utf8CodeUnitCount
        guard stream.count == count + id.utf8.count else { return false }
        let prefixMatches = prefix.withUTF8Buffer { expected in stream.prefix(count).elementsEqual(expected) }
        return prefixMatches && stream.dropFirst(count).elementsEqual(id.utf8)
    }
}
