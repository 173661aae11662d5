public import LogbookDomain

/// Which products a `ListProducts` query wants: all of them when every field is empty.
/// `search` matches a product whose name contains it, ignoring case (`Swift.String.lowercased`,
/// so non-ASCII letters too). The match compares the UTF-8 bytes of the lowercased texts,
/// so `%` and `_` are ordinary characters and every store gives the same answers; an
/// empty search matches every name.
public struct ProductFilter: Sendable, Equatable {
    public var category: ProductCategory?
    public var inStockOnly: Bool
    public var search: String?

    public init(category: ProductCategory? = nil, inStockOnly: Bool = false, search: String? = nil) {
        self.category = category
        self.inStockOnly = inStockOnly
        self.search = search
    }

    /// The case-folded form of a name or a search text that matching compares; stores that
    /// search in their own query language keep this form of each name.
    public static func folded(_ text: String) -> String { text.lowercased() }

    /// True when the folded `name` contains the folded `search`, byte for byte.
    public static func name(folded name: String, contains search: String) -> Bool {
        let needle = Array(search.utf8)
        guard !needle.isEmpty else { return true }
        let haystack = Array(name.utf8)
        guard needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count)
        where haystack[start] == needle[0] && haystack[start..<start + needle.count].elementsEqual(needle) {
            return true
        }
        return false
    }

    /// Whether `product` belongs to the list. Stores that filter in memory use this.
    public func matches(_ product: ProductView) -> Bool {
        if let category, product.category != category { return false }
        if inStockOnly && !product.isAvailable { return false }
        if let search, !Self.name(folded: Self.folded(product.name), contains: Self.folded(search)) { return false }
        return true
    }
}
