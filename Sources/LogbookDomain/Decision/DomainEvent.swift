/// Any event of the domain, with the stream it belongs on.
public enum DomainEvent: Sendable, Equatable {
    case user(UserEvent)
    case emailClaim(EmailClaimEvent)
    case post(PostEvent)
    case product(ProductEvent)
    case order(OrderEvent)

    /// The event's type name in the log and on the wire (`UserRegistered`, …).
    public var typeName: String {
        switch self {
        case .user(.registered): "UserRegistered"
        case .user(.profileUpdated): "UserProfileUpdated"
        case .user(.subscriptionChanged): "SubscriptionChanged"
        case .user(.deleted): "UserDeleted"
        case .user(.forgotten): "UserForgotten"
        case .user(.erased(let e)): e.typeName
        case .emailClaim(.claimed): "EmailClaimed"
        case .emailClaim(.released): "EmailReleased"
        case .emailClaim(.forgotten(let e)): e.typeName
        case .post(.created): "PostCreated"
        case .post(.edited): "PostEdited"
        case .post(.deleted): "PostDeleted"
        case .product(.added): "ProductAdded"
        case .product(.updated): "ProductUpdated"
        case .product(.restocked): "ProductRestocked"
        case .product(.removed): "ProductRemoved"
        case .product(.purchased): "ProductPurchased"
        case .order(.placed): "OrderPlaced"
        }
    }

    /// The stream the event is appended to.
    public var stream: StreamId {
        switch self {
        case .user(.registered(let e)): .user(e.userId)
        case .user(.profileUpdated(let e)): .user(e.userId)
        case .user(.subscriptionChanged(let e)): .user(e.userId)
        case .user(.deleted(let e)): .user(e.userId)
        case .user(.forgotten(let e)): .user(e.userId)
        case .user(.erased(let e)): .user(e.userId)
        case .emailClaim(.claimed(let e)): .email(e.bucket)
        case .emailClaim(.released(let e)): .email(e.bucket)
        case .emailClaim(.forgotten(let e)): .email(e.bucket)
        case .post(.created(let e)): .post(e.postId)
        case .post(.edited(let e)): .post(e.postId)
        case .post(.deleted(let e)): .post(e.postId)
        case .product(.added(let e)): .product(e.productId)
        case .product(.updated(let e)): .product(e.productId)
        case .product(.restocked(let e)): .product(e.productId)
        case .product(.removed(let e)): .product(e.productId)
        case .product(.purchased(let e)): .product(e.productId)
        case .order(.placed(let e)): .order(e.orderId)
        }
    }
}
