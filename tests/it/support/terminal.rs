//! A pseudo-terminal around the real binary: a program run here has a
//! terminal for stdin, stdout and stderr, as when a person runs it, and the
//! test reads what the screen shows (answers echoed by the terminal, as a
//! person sees them) and types as a person would, a line ended by Enter.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, ExitStatus};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long anything the program shows may take to appear.
const PATIENCE: Duration = Duration::from_secs(30);

pub struct Terminal {
    child: Child,
    /// The terminal's side a person types into and reads from.
    keyboard: std::fs::File,
    /// Everything shown so far, the terminal's `\r\n` as `\n`.
    screen: Arc<Mutex<String>>,
    /// Where the next [`Terminal::expect`] starts looking.
    read_up_to: usize,
    reader: Option<JoinHandle<()>>,
    command: String,
}

impl Terminal {
    /// Start `cmd` with a new pseudo-terminal as its stdin, stdout and stderr.
    pub fn spawn(mut cmd: Command) -> Terminal {
        let (mut master, mut slave) = (-1, -1);
        // SAFETY: openpty writes two descriptors into the integers given;
        // the name, settings and size may be null (the defaults: a
        // terminal in canonical mode with echo on, as a shell's).
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors are new, open and owned by no one else.
        let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let command = format!("{cmd:?}");
        cmd.stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave);
        // The terminal is the program's controlling terminal, as a shell's
        // is: a password prompt opens `/dev/tty`, which is that terminal.
        // SAFETY: setsid and ioctl are async-signal-safe, and touch only
        // the child about to exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                if libc::setsid() == -1 || libc::ioctl(0, libc::TIOCSCTTY, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().unwrap_or_else(|e| panic!("{command}: {e}"));
        // The program's side closes with the program alone: then reading the
        // screen ends (EIO), rather than waiting for a copy held here.
        drop(cmd);
        let screen = Arc::new(Mutex::new(String::new()));
        let mut display = std::fs::File::from(master.try_clone().unwrap());
        let shown = Arc::clone(&screen);
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = display.read(&mut buf) {
                let text = String::from_utf8_lossy(&buf[..n]).replace('\r', "");
                shown.lock().unwrap().push_str(&text);
            }
        });
        Terminal {
            child,
            keyboard: std::fs::File::from(master),
            screen,
            read_up_to: 0,
            reader: Some(reader),
            command,
        }
    }

    /// Everything the screen has shown so far.
    pub fn screen(&self) -> String {
        self.screen.lock().unwrap().clone()
    }

    /// Wait until `text` appears after what earlier calls found.
    pub fn expect(&mut self, text: &str) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let found = self.screen.lock().unwrap()[self.read_up_to..]
                .find(text)
                .map(|at| self.read_up_to + at + text.len());
            if let Some(end) = found {
                self.read_up_to = end;
                return;
            }
            if Instant::now() > deadline {
                panic!(
                    "{}: {text:?} did not appear within {PATIENCE:?}; the screen so far:\n{}",
                    self.command,
                    self.screen()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Type `line` and press Enter (a carriage return, which the terminal
    /// turns into the end of a line, as a keyboard's Enter).
    pub fn type_line(&mut self, line: &str) {
        self.keyboard.write_all(format!("{line}\r").as_bytes()).unwrap();
        self.keyboard.flush().unwrap();
    }

    /// Wait for the program to end; its exit status and the whole screen.
    pub fn finish(mut self) -> (ExitStatus, String) {
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("{} did not end; the screen:\n{}", self.command, self.screen());
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        (status, self.screen())
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        // A test that panicked midway leaves no program waiting for input.
        if self.reader.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
