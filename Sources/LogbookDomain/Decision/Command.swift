/// Every command the domain accepts, with already-valid values.
public enum Command: Sendable, Equatable {
    case user(UserCommand)
    case post(PostCommand)
    case product(ProductCommand)

    /// The wire name of the command (`RegisterUser`, …).
    public var typeName: String {
        switch self {
        case .user(.register): "RegisterUser"
        case .user(.updateProfile): "UpdateUserProfile"
        case .user(.changeSubscription): "ChangeSubscription"
        case .user(.delete): "DeleteUser"
        case .user(.forget): "ForgetUser"
        case .post(.create): "CreatePost"
        case .post(.edit): "EditPost"
        case .post(.delete): "DeletePost"
        case .product(.add): "AddProduct"
        case .product(.update): "UpdateProduct"
        case .product(.restock): "RestockProduct"
        case .product(.remove): "RemoveProduct"
        case .product(.purchase): "PurchaseProduct"
        }
    }

    /// The stream a client's `expectedVersion` refers to.
    public var primaryStream: StreamId {
        switch self {
        case .user(let c): .user(c.userId)
        case .post(let c): .post(c.postId)
        case .product(let c): .product(c.productId)
        }
    }

    /// Every stream whose state the decision reads, given what is known so far. The
    /// caller loads these, asks again with the loaded states until nothing new is named
    /// (a user's current email claim is only known once the user is loaded), and appends
    /// with their versions as expectations, so a decision never commits on stale state.
    /// `buckets` says which stream holds the claims of an address.
    public func streamsRead(given states: AggregateStates, buckets: EmailBucketing) -> [StreamId] {
        switch self {
        case .user(let command):
            let userId = command.userId
            let newEmail: NormalizedEmail? =
                switch command {
                case .register(let c): c.email.normalized
                case .updateProfile(let c): c.email?.normalized
                case .changeSubscription, .delete, .forget: nil
                }
            var streams: [StreamId] = [.user(userId)]
            if let newEmail { streams.append(.email(buckets.bucket(of: newEmail))) }
            if let current = states.user(userId).liveUser?.email.normalized, current != newEmail {
                let stream = StreamId.email(buckets.bucket(of: current))
                if !streams.contains(stream) { streams.append(stream) }
            }
            return streams
        case .post(.create(let c)): return [.post(c.postId), .user(c.authorId)]
        case .product(.purchase(let c)): return [.product(c.productId), .order(c.orderId), .user(c.userId)]
        case .post, .product: return [primaryStream]
        }
    }

    /// The streams this command brings into being: the user it registers, the post it
    /// creates, the product it adds, the order a purchase places. Each is among
    /// `streamsRead`, and the command succeeds only while it has no events (once created,
    /// no stream folds back to its initial state). Empty for every other command.
    public var streamsCreated: [StreamId] {
        switch self {
        case .user(.register(let c)): [.user(c.userId)]
        case .post(.create(let c)): [.post(c.postId)]
        case .product(.add(let c)): [.product(c.productId)]
        case .product(.purchase(let c)): [.order(c.orderId)]
        case .user, .post, .product: []
        }
    }
}
