//! The page's table helper.

use fixed_window_reports::{Table, TableCell};

#[test]
fn a_table_has_its_header_then_its_rows_in_order() {
    let mut table = Table::new(["a", "b"]);
    table.row(["1", "2"]).row(["3", "4"]);
    assert_eq!(table.len(), 2);
    assert_eq!(
        table.to_html(),
        "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr></table>"
    );
}

#[test]
fn text_is_escaped_and_html_is_kept() {
    let mut table = Table::new(["<th>"]);
    table.row([TableCell::text("<script>&")]);
    table.row([TableCell::html("<code>x</code>")]);
    let html = table.to_html();
    assert!(html.contains("<th>&lt;th&gt;</th>"), "{html}");
    assert!(html.contains("<td>&lt;script&gt;&amp;</td>"), "{html}");
    assert!(html.contains("<td><code>x</code></td>"), "{html}");
}

#[test]
fn a_cell_carries_its_class_tooltip_and_span() {
    let mut table = Table::new(["x"]);
    table.row([TableCell::text("v")
        .class("miss")
        .title("say \"why\"")
        .span(3)]);
    assert!(
        table
            .to_html()
            .contains("<td class=\"miss\" title=\"say &quot;why&quot;\" colspan=\"3\">v</td>"),
        "{}",
        table.to_html()
    );
}

#[test]
fn a_span_of_zero_or_one_is_no_span() {
    let mut table = Table::new(["x"]);
    table.row([TableCell::text("a").span(0), TableCell::text("b").span(1)]);
    assert!(table.to_html().contains("<td>a</td><td>b</td>"));
}

#[test]
fn a_table_without_rows_is_empty_but_still_renders_its_header() {
    let table = Table::new(["only"]);
    assert!(table.is_empty());
    assert_eq!(table.to_html(), "<table><tr><th>only</th></tr></table>");
}
