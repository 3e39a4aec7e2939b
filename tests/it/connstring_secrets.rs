//! Malformed connection strings never show a piece of the password: on
//! stderr or stdout of `pgmcp query` and `pgmcp check`, the real binary, for
//! URL and keyword/value strings a stray space, quote, `/`, `?` or `#` split.

use std::time::Duration;

use crate::support::pgmcp;

/// Passwords made of letters no message contains, so any 3-character window
/// of one found in the output came from the input.
const SECRETS: &[&str] = &["Xq7 Zk9/Wm4?Jr8", "Qz8 Vb3'Hn5=Tg6", "Jx2 Kq4#Wz7@Vy3"];

/// Connection strings with `{}` for the password. Hosts are on the loopback
/// with a closed port, so every attempt fails fast.
const VARIANTS: &[&str] = &[
    "postgresql://u:{}@127.0.0.1:1/db",
    "postgres://u:{}@127.0.0.1:1/db?sslmode=disable",
    "postgresql://u:{}",
    "host=127.0.0.1 port=1 user=u password={} dbname=d",
    "password={} host=127.0.0.1 port=1",
    "host=127.0.0.1 port=1 password='{} user=u",
    "host=127.0.0.1 port=1 password={}' user=u",
    "host=127.0.0.1 port=1 password = {}",
    "host=127.0.0.1 port={} user=u",
    "host=127.0.0.1 port=1 sslmode={}",
    "host=127.0.0.1 port=1 user=u {}",
];

#[test]
fn no_piece_of_a_password_reaches_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let mut refused = 0;
    for variant in VARIANTS {
        for secret in SECRETS {
            let connstring = variant.replace("{}", secret);
            for args in [&["query", "SELECT 1"][..], &["check"][..]] {
                let out = pgmcp(home.path())
                    .args(args)
                    .env("PGMCP_PG_CONNSTRING", &connstring)
                    .env("PGCONNECT_TIMEOUT", "2")
                    .timeout(Duration::from_secs(30))
                    .output()
                    .unwrap();
                refused += usize::from(!out.status.success());
                let shown = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                let chars: Vec<char> = secret.chars().collect();
                for piece in chars.windows(3) {
                    let piece: String = piece.iter().collect();
                    assert!(
                        !shown.contains(&piece),
                        "pgmcp {args:?} with {connstring:?} shows {piece:?}:\n{shown}"
                    );
                }
            }
        }
    }
    // Every one fails (closed port or malformed): none passes by not running.
    assert_eq!(refused, VARIANTS.len() * SECRETS.len() * 2);
}
