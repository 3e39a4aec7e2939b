//! The data grid as an MCP App (the `io.modelcontextprotocol/ui`
//! extension, SEP-1865): one `ui://` resource, a page a client that renders
//! MCP Apps shows `query`'s answer in, and the `_meta` that ties `query` to
//! it. The page (`grid.html`) is self-contained: no network, a CSP that
//! forbids it, values written as text only. It pages and sorts by asking
//! the host to call `query` again, so every row it shows went through the
//! same guard, caps and fences as the model's; the model's own answer is
//! unchanged. `grid: false` in the config takes all of it away.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{ExtensionCapabilities, MetaObject, ReadResourceResult, Resource, ResourceContents};
use serde_json::{Value, json};

use super::Server;
use crate::service::Service;

/// Where the grid lives.
pub const URI: &str = "ui://pgmcp/grid";

/// The type of an MCP App's HTML, as the extension names it.
pub const MIME: &str = "text/html;profile=mcp-app";

/// The extension's identifier, in `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The `_meta` key of a `query` answer whose statement the guard judged to
/// only read: the grid pages and sorts only those (running the statement
/// again changes nothing).
pub const READS: &str = "pgmcp/reads";

/// The page itself: hand-written, inline script and style, nothing fetched.
const PAGE: &str = include_str!("grid.html");

/// Whether `service` offers the grid: the config's `grid` switch, and a
/// `query` tool for it to page with (without one it has nothing to call).
pub fn offered(service: &Service) -> bool {
    service.default_engine().config().grid && service.enabled().query
}

/// `query` and the curated tools as `tools/list` shows them with the
/// grid: `_meta.ui.resourceUri`, and the flat `ui/resourceUri` the
/// extension still documents (deprecated) for hosts that read only that.
/// A curated tool's answer has `query`'s shape: the grid shows it, without
/// a pager (it has no statement of the call's own to page).
pub(super) fn fit(router: &mut ToolRouter<Server>, service: &Service) {
    if !offered(service) {
        return;
    }
    let names = std::iter::once("query").chain(service.tools().iter().map(|c| c.tool.name.as_str()));
    for name in names {
        if let Some(route) = router.map.get_mut(name) {
            let mut meta = route.attr.meta.clone().unwrap_or_default();
            meta.insert("ui".to_owned(), json!({"resourceUri": URI}));
            meta.insert("ui/resourceUri".to_owned(), Value::from(URI));
            route.attr.meta = Some(meta);
        }
    }
}

/// The extension as `initialize` declares it, when the grid is offered.
pub fn extensions(service: &Service) -> Option<ExtensionCapabilities> {
    if !offered(service) {
        return None;
    }
    let mut settings = serde_json::Map::new();
    settings.insert("mimeTypes".to_owned(), json!([MIME]));
    Some(ExtensionCapabilities::from([(EXTENSION.to_owned(), settings)]))
}

/// The grid as `resources/list` lists it.
pub fn resource() -> Resource {
    Resource::new(URI, "grid")
        .with_title("Data grid")
        .with_description(
            "A grid that shows a query's result to the person in the conversation, pages through the whole \
             result by calling query again, sorts by a column, copies a cell and exports a page as CSV.",
        )
        .with_mime_type(MIME)
        .with_meta(ui_meta())
}

/// Whether `uri` names the grid.
pub fn is_ours(uri: &str) -> bool {
    uri == URI
}

/// The page, as `resources/read` answers it.
pub fn read() -> ReadResourceResult {
    ReadResourceResult::new(vec![
        ResourceContents::text(PAGE, URI)
            .with_mime_type(MIME)
            .with_meta(ui_meta()),
    ])
}

/// `_meta.ui` of the resource: no domain of any kind (the page fetches
/// nothing), a border, and the clipboard for "copy a cell".
fn ui_meta() -> MetaObject {
    let mut meta = MetaObject::new();
    meta.insert(
        "ui".to_owned(),
        json!({
            "csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []},
            "permissions": {"clipboardWrite": {}},
            "prefersBorder": true,
        }),
    );
    meta
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page fetches nothing and says so itself: its own CSP forbids
    /// every network request, whatever the host's is.
    #[test]
    fn the_page_forbids_the_network() {
        let csp = PAGE
            .split("http-equiv=\"Content-Security-Policy\"")
            .nth(1)
            .and_then(|rest| rest.split("content=\"").nth(1))
            .and_then(|rest| rest.split('"').next())
            .expect("the page carries a CSP meta tag");
        assert!(csp.contains("default-src 'none'"), "{csp}");
        assert!(csp.contains("connect-src 'none'"), "{csp}");
        for fetch in [
            "fetch(",
            "XMLHttpRequest",
            "WebSocket",
            "<script src",
            "<link",
            "@import",
            "innerHTML",
        ] {
            assert!(!PAGE.contains(fetch), "the page uses {fetch}");
        }
    }

    #[test]
    fn the_resource_is_an_mcp_app() {
        let listed = serde_json::to_value(resource()).unwrap();
        assert_eq!(listed["uri"], URI);
        assert_eq!(listed["mimeType"], MIME);
        let read = serde_json::to_value(read()).unwrap();
        assert_eq!(read["contents"][0]["mimeType"], MIME);
        assert_eq!(read["contents"][0]["_meta"]["ui"]["csp"]["connectDomains"], json!([]));
        assert!(
            read["contents"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("<!DOCTYPE html>")
        );
    }
}
