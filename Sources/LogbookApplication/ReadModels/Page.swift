public import LogbookDomain
public import LogbookJSON

/// One page of a list query: `items` are at most `perPage` rows, starting at row
/// `(page - 1) × perPage` of the whole list, and `total` counts the whole list.
/// Lists are ordered by the position of the event that created each row, oldest first,
/// so a row keeps its place while others are added after it.
public struct Page<Item> {
    public var items: [Item]
    public var page: Int
    public var perPage: Int
    public var total: Int

    public init(items: [Item], page: Int, perPage: Int, total: Int) {
        self.items = items
        self.page = page
        self.perPage = perPage
        self.total = total
    }

    /// The page and page size a reader serves for a request (at least 1 each), and the
    /// number of rows before the page, saturating instead of overflowing for huge pages.
    public static func window(page: Int, perPage: Int) -> (page: Int, perPage: Int, offset: Int) {
        let page = max(page, 1)
        let perPage = max(perPage, 1)
        let (offset, overflow) = (page - 1).multipliedReportingOverflow(by: perPage)
        return (page, perPage, overflow ? Int.max : offset)
    }
}

extension Page: Sendable where Item: Sendable {}
extension Page: Equatable where Item: Equatable {}

extension Page where Item: ReadModelView {
    /// `{"items", "page", "perPage", "total"}`, the `result` of a list query.
    public var json: JSONValue {
        [
            "items": .array(items.map(\.json)), "page": .int(page), "perPage": .int(perPage), "total": .int(total),
        ]
    }
}

/// A validated page request of a list query: `page` from 1 (default 1), `perPage` from 1
/// to 100 (default 20).
public struct PageRequest: Sendable, Equatable {
    public static let defaultPerPage = 20
    public static let maximumPerPage = 100

    public let page: Int
    public let perPage: Int

    public static let first = PageRequest(checkedPage: 1, perPage: defaultPerPage)

    private init(checkedPage page: Int, perPage: Int) {
        self.page = page
        self.perPage = perPage
    }

    /// Refuses a page below 1 or a page size outside 1–100, naming the field.
    public init(page: Int = 1, perPage: Int = PageRequest.defaultPerPage) throws(DomainError) {
        guard page >= 1 else { throw .invalidInput(field: "page", reason: "must be an integer of at least 1") }
        guard (1...Self.maximumPerPage).contains(perPage) else {
            throw .invalidInput(field: "perPage", reason: "must be an integer from 1 to \(Self.maximumPerPage)")
        }
        self.init(checkedPage: page, perPage: perPage)
    }
}
