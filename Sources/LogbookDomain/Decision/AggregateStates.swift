/// The folded state of one stream, whatever its kind.
public enum AggregateState: Sendable, Equatable {
    case user(UserState)
    case emailClaim(EmailClaimState)
    case post(PostState)
    case product(ProductState)
    case order(OrderState)

    /// The state of a stream that has no events yet.
    public static func initial(for stream: StreamId) -> AggregateState {
        switch stream {
        case .user: .user(.initial)
        case .email: .emailClaim(.initial)
        case .post: .post(.initial)
        case .product: .product(.initial)
        case .order: .order(.initial)
        }
    }

    /// Folds one event; an event of another kind of stream leaves the state unchanged.
    public func evolved(by event: DomainEvent) -> AggregateState {
        switch (self, event) {
        case (.user(let state), .user(let event)): .user(state.evolved(by: event))
        case (.emailClaim(let state), .emailClaim(let event)): .emailClaim(state.evolved(by: event))
        case (.post(let state), .post(let event)): .post(state.evolved(by: event))
        case (.product(let state), .product(let event)): .product(state.evolved(by: event))
        case (.order(let state), .order(let event)): .order(state.evolved(by: event))
        default: self
        }
    }
}

/// The states a decision may read, by stream. A stream that is absent reads as new.
public struct AggregateStates: Sendable, Equatable {
    public private(set) var byStream: [StreamId: AggregateState]

    public init(_ byStream: [StreamId: AggregateState] = [:]) {
        self.byStream = byStream
    }

    /// Folds events, in order, into the states of their streams.
    public init(folding events: [DomainEvent]) {
        self.init()
        for event in events { apply(event) }
    }

    public mutating func apply(_ event: DomainEvent) {
        let stream = event.stream
        byStream[stream] = self[stream].evolved(by: event)
    }

    public subscript(stream: StreamId) -> AggregateState {
        get { byStream[stream] ?? .initial(for: stream) }
        set { byStream[stream] = newValue }
    }

    public func user(_ id: UserId) -> UserState {
        if case .user(let state) = self[.user(id)] { state } else { .initial }
    }

    public func emailClaims(_ bucket: EmailBucket) -> EmailClaimState {
        if case .emailClaim(let state) = self[.email(bucket)] { state } else { .initial }
    }

    public func post(_ id: PostId) -> PostState {
        if case .post(let state) = self[.post(id)] { state } else { .initial }
    }

    public func product(_ id: ProductId) -> ProductState {
        if case .product(let state) = self[.product(id)] { state } else { .initial }
    }

    public func order(_ id: OrderId) -> OrderState {
        if case .order(let state) = self[.order(id)] { state } else { .initial }
    }
}
