import LogbookDomain
import Testing

@Suite("Money")
struct MoneyTests {
    @Test(arguments: [
        ("19.99", 1999 as Int64, "19.99"), ("19.9", 1990, "19.90"), ("0", 0, "0.00"), ("0.01", 1, "0.01"),
        ("5", 500, "5.00"), ("1200.00", 120_000, "1200.00"), ("007.5", 750, "7.50"), ("0.10", 10, "0.10"),
        ("999999999.99", 99_999_999_999, "999999999.99"), ("0000000000999999999.99", 99_999_999_999, "999999999.99"),
    ])
    func readsExactDecimalStrings(_ text: String, _ cents: Int64, _ canonical: String) throws {
        let money = try Money(text)
        #expect(money.cents == cents)
        #expect(money.description == canonical)
        #expect(try Money(money.description) == money, "the canonical form reads back")
    }

    @Test(arguments: [
        "-1", "-0.01", "+1", "1.234", "1e3", "1E3", ".5", "5.", "", " 1", "1 ", "1,00", "1.2.3", "0x10", "NaN", "½",
        "١", "1000000000", "999999999.999", "1000000000.00", "12345678901",
    ])
    func refuses(_ text: String) {
        expectInvalidInput(field: "price", "\(text.debugDescription)") { _ = try Money(text) }
    }

    @Test func errorNamesTheGivenField() {
        expectInvalidInput(field: "unitPrice") { _ = try Money("abc", field: "unitPrice") }
    }

    @Test func multiplicationIsExact() throws {
        #expect(try Money("0.10").multiplied(by: Quantity(3)) == Money("0.30"))
        #expect(try Money("19.99").multiplied(by: Quantity(3)).description == "59.97")
        #expect(try Money("0.01").multiplied(by: Quantity(1_000_000_000)).description == "10000000.00")
        #expect(try Money("0").multiplied(by: Quantity(7)) == Money.zero)
        #expect(try Money("999999999.99").multiplied(by: Quantity(1)).description == "999999999.99")
    }

    @Test func ordersByAmount() throws {
        #expect(try Money("0.99") < Money("1"))
        #expect(try Money("1.5") == Money("1.50"))
    }
}

@Suite("Quantity and stock")
struct QuantityTests {
    @Test(arguments: [1, 2, 999, 1_000_000_000])
    func quantityAcceptsOneToOneBillion(_ value: Int) throws {
        #expect(try Quantity(value).value == value)
    }

    @Test(arguments: [0, -1, 1_000_000_001, Int.min, Int.max])
    func quantityRefusesOthers(_ value: Int) {
        expectInvalidInput(field: "quantity") { _ = try Quantity(value) }
    }

    @Test(arguments: [0, 1, 1_000_000_000])
    func stockAcceptsZeroToOneBillion(_ value: Int) throws {
        #expect(try Stock(value).value == value)
    }

    @Test(arguments: [-1, 1_000_000_001, Int.min, Int.max])
    func stockRefusesOthers(_ value: Int) {
        expectInvalidInput(field: "stock") { _ = try Stock(value) }
    }

    @Test func stockIsAvailableWhilePositive() throws {
        #expect(!Stock.empty.isAvailable)
        #expect(try Stock(1).isAvailable)
    }

    @Test func addingStaysWithinTheMaximum() throws {
        #expect(try Stock(5).adding(Quantity(3)) == Stock(8))
        #expect(try Stock(999_999_999).adding(Quantity(1)) == Stock(1_000_000_000))
        expectInvalidInput(field: "quantity") { _ = try Stock(1_000_000_000).adding(Quantity(1)) }
        expectInvalidInput(field: "quantity") { _ = try Stock(1).adding(Quantity(1_000_000_000)) }
    }

    @Test func removingNeverGoesNegative() throws {
        #expect(try Stock(5).removing(Quantity(5)) == Stock.empty)
        #expect(try Stock(5).removing(Quantity(2)) == Stock(3))
        #expect(try Stock(5).removing(Quantity(6)) == nil)
        #expect(try Stock.empty.removing(Quantity(1)) == nil)
    }
}
