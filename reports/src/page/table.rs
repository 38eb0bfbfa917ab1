//! A small HTML table builder: a header row, then rows of cells, each cell text (escaped) or
//! HTML (as written), with an optional class, tooltip and column span.

use std::fmt::Write as _;

use html_escape::{encode_double_quoted_attribute as attr, encode_text as esc};

/// One cell of a [`Table`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableCell {
    html: String,
    class: Option<String>,
    title: Option<String>,
    span: usize,
}

impl TableCell {
    /// A cell showing `text`, escaped.
    pub fn text(text: impl AsRef<str>) -> TableCell {
        TableCell::html(esc(text.as_ref()))
    }

    /// A cell holding `html` as written (markup such as `<code>` or a `<span>`).
    pub fn html(html: impl Into<String>) -> TableCell {
        TableCell {
            html: html.into(),
            class: None,
            title: None,
            span: 1,
        }
    }

    /// The cell with a CSS class (`met`, `miss`, `missing`, `best`).
    #[must_use]
    pub fn class(mut self, class: &str) -> TableCell {
        self.class = Some(class.to_owned());
        self
    }

    /// The cell with a tooltip.
    #[must_use]
    pub fn title(mut self, title: &str) -> TableCell {
        self.title = Some(title.to_owned());
        self
    }

    /// The cell spanning `columns` columns (at least one).
    #[must_use]
    pub fn span(mut self, columns: usize) -> TableCell {
        self.span = columns.max(1);
        self
    }

    fn write(&self, out: &mut String, tag: &str) {
        let _ = write!(out, "<{tag}");
        if let Some(class) = &self.class {
            let _ = write!(out, " class=\"{}\"", attr(class));
        }
        if let Some(title) = &self.title {
            let _ = write!(out, " title=\"{}\"", attr(title));
        }
        if self.span > 1 {
            let _ = write!(out, " colspan=\"{}\"", self.span);
        }
        let _ = write!(out, ">{}</{tag}>", self.html);
    }
}

impl From<&str> for TableCell {
    fn from(text: &str) -> TableCell {
        TableCell::text(text)
    }
}

impl From<String> for TableCell {
    fn from(text: String) -> TableCell {
        TableCell::text(text)
    }
}

/// An HTML table: a header row and rows of [`TableCell`]s.
///
/// # Examples
///
/// A header, a row of text (escaped) and a row with a classed cell spanning two columns.
///
/// ```
/// use fixed_window_reports::{Table, TableCell};
///
/// let mut table = Table::new(["limiter", "ns"]);
/// table.row(["a<b", "1.5"]);
/// table.row([TableCell::text("not measured").class("missing").span(2)]);
/// assert_eq!(
///     table.to_html(),
///     "<table><tr><th>limiter</th><th>ns</th></tr><tr><td>a&lt;b</td><td>1.5</td></tr>\
///      <tr><td class=\"missing\" colspan=\"2\">not measured</td></tr></table>",
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    header: Vec<TableCell>,
    rows: Vec<Vec<TableCell>>,
}

impl Table {
    /// A table with this header row.
    pub fn new<C: Into<TableCell>>(header: impl IntoIterator<Item = C>) -> Table {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row.
    pub fn row<C: Into<TableCell>>(&mut self, cells: impl IntoIterator<Item = C>) -> &mut Table {
        self.rows.push(cells.into_iter().map(Into::into).collect());
        self
    }

    /// How many rows there are, the header not counted.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there is no row but the header.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as HTML.
    pub fn to_html(&self) -> String {
        let mut out = String::from("<table><tr>");
        for cell in &self.header {
            cell.write(&mut out, "th");
        }
        out.push_str("</tr>");
        for row in &self.rows {
            out.push_str("<tr>");
            for cell in row {
                cell.write(&mut out, "td");
            }
            out.push_str("</tr>");
        }
        out.push_str("</table>");
        out
    }
}
