//! Certificates made for a test with the `openssl` command: a CA, and server
//! or client certificates it signs. Every file lands in the test's own dir.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A certificate authority: its certificate and key, in PEM files.
pub struct Ca {
    pub cert: PathBuf,
    key: PathBuf,
    dir: PathBuf,
}

/// A certificate signed by a [`Ca`], and its private key (PEM files).
pub struct Issued {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Ca {
    /// A new self-signed CA called `name`, its files in `dir`.
    pub fn new(dir: &Path, name: &str) -> Ca {
        let cert = dir.join(format!("{name}.crt"));
        let key = dir.join(format!("{name}.key"));
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "30",
            "-subj",
            &format!("/CN={name}"),
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
            "-keyout",
            path(&key),
            "-out",
            path(&cert),
        ]);
        Ca {
            cert,
            key,
            dir: dir.to_owned(),
        }
    }

    /// A server certificate for the given subject alternative names
    /// (`DNS:localhost,IP:127.0.0.1`).
    pub fn server(&self, name: &str, san: &str) -> Issued {
        self.issue(name, &format!("subjectAltName={san}\nextendedKeyUsage=serverAuth\n"))
    }

    /// A client certificate whose common name is `user` (what PostgreSQL's
    /// `cert` authentication matches).
    pub fn client(&self, user: &str) -> Issued {
        self.issue(user, "extendedKeyUsage=clientAuth\n")
    }

    fn issue(&self, cn: &str, extensions: &str) -> Issued {
        let stem = self
            .dir
            .join(format!("{cn}-by-{}", self.cert.file_stem().unwrap().to_string_lossy()));
        let (cert, key, csr, ext) = (
            stem.with_extension("crt"),
            stem.with_extension("key"),
            stem.with_extension("csr"),
            stem.with_extension("ext"),
        );
        std::fs::write(
            &ext,
            format!("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n{extensions}"),
        )
        .unwrap();
        openssl(&[
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-subj",
            &format!("/CN={cn}"),
            "-keyout",
            path(&key),
            "-out",
            path(&csr),
        ]);
        openssl(&[
            "x509",
            "-req",
            "-in",
            path(&csr),
            "-CA",
            path(&self.cert),
            "-CAkey",
            path(&self.key),
            "-CAcreateserial",
            "-days",
            "30",
            "-extfile",
            path(&ext),
            "-out",
            path(&cert),
        ]);
        Issued { cert, key }
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

fn openssl(args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run openssl (apt-get install -y openssl): {e}"));
    assert!(
        out.status.success(),
        "openssl {}\nstatus: {}\nstderr:\n{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
