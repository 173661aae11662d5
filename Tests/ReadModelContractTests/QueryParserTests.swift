import LogbookApplication
import LogbookDomain
import LogbookJSON
import Testing

/// Reading queries off the wire: every type, its defaults, and every refusal.
@Suite("Query parser")
struct QueryParserTests {
    private func parse(_ type: String, _ data: JSONValue) throws(ServiceError) -> Query {
        try QueryParser.parse(type: type, data: data)
    }

    @Test func everyQueryTypeWithItsDefaults() throws {
        #expect(try parse("GetUser", ["userId": "u1"]) == .getUser(try UserId("u1")))
        #expect(try parse("ListUsers", [:]) == .listUsers(.first))
        #expect(try parse("GetPost", ["postId": "p1"]) == .getPost(try PostId("p1")))
        #expect(try parse("ListPosts", [:]) == .listPosts(authorId: nil, .first))
        #expect(try parse("GetProduct", ["productId": "p1"]) == .getProduct(try ProductId("p1")))
        #expect(try parse("ListProducts", [:]) == .listProducts(ProductFilter(), .first))
        #expect(try parse("ListOrders", ["userId": "u1"]) == .listOrders(userId: try UserId("u1"), .first))
        #expect(PageRequest.first == (try PageRequest(page: 1, perPage: 20)))
        #expect(QueryParser.queryTypes.count == 7)
    }

    @Test func everyFieldGiven() throws {
        #expect(
            try parse("ListUsers", ["page": 3, "perPage": 100]) == .listUsers(try PageRequest(page: 3, perPage: 100)))
        #expect(
            try parse("ListPosts", ["authorId": "u1", "page": 2, "perPage": 1])
                == .listPosts(authorId: try UserId("u1"), try PageRequest(page: 2, perPage: 1)))
        #expect(
            try parse(
                "ListProducts",
                ["category": "electronics", "inStockOnly": true, "search": "100% _tea_", "page": 4, "perPage": 50])
                == .listProducts(
                    ProductFilter(category: .electronics, inStockOnly: true, search: "100% _tea_"),
                    try PageRequest(page: 4, perPage: 50)))
        #expect(
            try parse("ListProducts", ["inStockOnly": false, "search": ""])
                == .listProducts(ProductFilter(inStockOnly: false, search: ""), .first))
        #expect(
            try parse("ListOrders", ["userId": "u1", "page": 9, "perPage": 7])
                == .listOrders(userId: try UserId("u1"), try PageRequest(page: 9, perPage: 7)))
    }

    @Test func nullMeansAbsent() throws {
        #expect(
            try parse(
                "ListProducts", ["category": nil, "inStockOnly": nil, "search": nil, "page": nil, "perPage": nil])
                == .listProducts(ProductFilter(), .first))
        #expect(try parse("ListPosts", ["authorId": nil]) == .listPosts(authorId: nil, .first))
    }

    @Test func unknownTypesNameTheKnownOnes() {
        for type in ["", "getUser", "ListUser", "RegisterUser", "GetOrder"] {
            let error = #expect(throws: ServiceError.self) { try parse(type, [:]) }
            #expect(error?.code == .unknownType)
            #expect(
                error?.message
                    == "unknown query type '\(type)' (known: GetUser, ListUsers, GetPost, ListPosts, GetProduct, "
                    + "ListProducts, ListOrders)")
            #expect(error?.details.first?.key == "type")
            #expect(error?.details.first?.value == .string(type))
        }
    }

    /// Each bad request and the field its `invalid_input` must name.
    static let invalid: [(String, String, JSONValue, String)] = [
        ("data not an object", "ListUsers", "page 1", "data"),
        ("data an array", "GetUser", ["u1"], "data"),
        ("data null", "ListUsers", nil, "data"),
        ("unknown field", "ListUsers", ["pages": 2], "pages"),
        ("field of another query", "GetUser", ["userId": "u1", "postId": "p1"], "postId"),
        ("missing userId", "GetUser", [:], "userId"),
        ("null userId", "GetUser", ["userId": nil], "userId"),
        ("userId not a string", "GetUser", ["userId": 1], "userId"),
        ("userId not an id", "GetUser", ["userId": "u 1"], "userId"),
        ("userId too long", "GetUser", ["userId": .string(String(repeating: "a", count: 65))], "userId"),
        ("missing postId", "GetPost", [:], "postId"),
        ("postId empty", "GetPost", ["postId": ""], "postId"),
        ("missing productId", "GetProduct", ["productId": nil], "productId"),
        ("productId not an id", "GetProduct", ["productId": "p/1"], "productId"),
        ("authorId not an id", "ListPosts", ["authorId": "ann@example.com"], "authorId"),
        ("authorId not a string", "ListPosts", ["authorId": true], "authorId"),
        ("missing userId of orders", "ListOrders", ["page": 1], "userId"),
        ("orders userId not an id", "ListOrders", ["userId": "ü"], "userId"),
        ("page zero", "ListUsers", ["page": 0], "page"),
        ("page negative", "ListPosts", ["page": -1], "page"),
        ("page a string", "ListProducts", ["page": "2"], "page"),
        ("page a fraction", "ListOrders", ["userId": "u1", "page": .double(1.5)], "page"),
        ("page a boolean", "ListUsers", ["page": true], "page"),
        ("perPage zero", "ListUsers", ["perPage": 0], "perPage"),
        ("perPage above 100", "ListPosts", ["perPage": 101], "perPage"),
        ("perPage negative", "ListProducts", ["perPage": -5], "perPage"),
        ("perPage a string", "ListOrders", ["userId": "u1", "perPage": "20"], "perPage"),
        ("unknown category", "ListProducts", ["category": "toys"], "category"),
        ("category in capitals", "ListProducts", ["category": "Food"], "category"),
        ("category not a string", "ListProducts", ["category": 1], "category"),
        ("inStockOnly a string", "ListProducts", ["inStockOnly": "true"], "inStockOnly"),
        ("inStockOnly a number", "ListProducts", ["inStockOnly": 1], "inStockOnly"),
        ("search not a string", "ListProducts", ["search": 42], "search"),
        ("search too long", "ListProducts", ["search": .string(String(repeating: "x", count: 201))], "search"),
        (
            "search too many bytes", "ListProducts",
            ["search": .string(String(repeating: "e" + String(repeating: "\u{301}", count: 10), count: 50))], "search"
        ),
        ("filter on the wrong list", "ListUsers", ["category": "food"], "category"),
    ]

    @Test(arguments: invalid)
    func invalidInputNamesTheField(_ name: String, _ type: String, _ data: JSONValue, _ field: String) {
        let error = #expect(throws: ServiceError.self, "\(name)") { try parse(type, data) }
        #expect(error?.code == .invalidInput, "\(name)")
        #expect(error?.details.first?.key == "field", "\(name)")
        #expect(error?.details.first?.value == .string(field), "\(name)")
        #expect(error?.message.hasPrefix("\(field): ") == true, "\(name): \(error?.message ?? "")")
    }

    @Test func limitsAreInclusive() throws {
        #expect(try parse("ListUsers", ["perPage": 1]) == .listUsers(try PageRequest(page: 1, perPage: 1)))
        #expect(try parse("ListUsers", ["perPage": 100]) == .listUsers(try PageRequest(page: 1, perPage: 100)))
        #expect(
            try parse("ListUsers", ["page": .int(Int.max)]) == .listUsers(try PageRequest(page: Int.max, perPage: 20)))
        let longest = String(repeating: "ß", count: 200)
        #expect(
            try parse("ListProducts", ["search": .string(longest)])
                == .listProducts(ProductFilter(search: longest), .first))
        #expect(
            try parse("GetUser", ["userId": .string(String(repeating: "a", count: 64))])
                == .getUser(try UserId(String(repeating: "a", count: 64))))
    }
}
