//! A TCP proxy in front of a test daemon that can lose answers and cut the network, to test
//! retries and lease loss without sleeping.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub struct Proxy {
    /// `http://127.0.0.1:<port>`: point clients here instead of at the daemon.
    pub url: String,
    /// `true` while the network is cut.
    cut: watch::Sender<bool>,
    /// How many of the next connections lose their answer.
    lose_answers: Arc<AtomicUsize>,
    /// Connections accepted so far.
    pub connections: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl Proxy {
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let url = format!("http://{}", listener.local_addr().expect("proxy addr"));
        let (cut, cut_rx) = watch::channel(false);
        let lose_answers = Arc::new(AtomicUsize::new(0));
        let connections = Arc::new(AtomicUsize::new(0));
        let (lose, count) = (lose_answers.clone(), connections.clone());
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                if *cut_rx.borrow() {
                    drop(client);
                    continue;
                }
                let lose_this = lose
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok();
                tokio::spawn(serve(client, upstream, lose_this, cut_rx.clone()));
            }
        });
        Proxy {
            url,
            cut,
            lose_answers,
            connections,
            task,
        }
    }

    /// Cuts every open connection and refuses new ones until [`Proxy::heal`].
    pub fn cut(&self) {
        self.cut.send_replace(true);
    }

    pub fn heal(&self) {
        self.cut.send_replace(false);
    }

    /// The next `n` connections deliver their request to the daemon, then close as soon as the
    /// daemon starts answering, so the client never sees the answer.
    pub fn lose_next_answers(&self, n: usize) {
        self.lose_answers.store(n, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    mut client: TcpStream,
    upstream: SocketAddr,
    lose_answer: bool,
    mut cut: watch::Receiver<bool>,
) {
    let Ok(mut daemon) = TcpStream::connect(upstream).await else {
        return;
    };
    let cut_now = async move {
        let _ = cut.wait_for(|c| *c).await;
    };
    if lose_answer {
        let (mut from_client, _) = client.split();
        let (mut from_daemon, mut to_daemon) = daemon.split();
        let mut first = [0u8; 1];
        tokio::select! {
            _ = tokio::io::copy(&mut from_client, &mut to_daemon) => {}
            _ = from_daemon.read(&mut first) => {}
            _ = cut_now => {}
        }
        return;
    }
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut client, &mut daemon) => {}
        _ = cut_now => {}
    }
}
