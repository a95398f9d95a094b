//! How statements reach the server on the pooled connections.
//!
//! Directly connected, sqlx prepares each statement once per connection under a name
//! (`sqlx_s_N`) and reuses it. Behind a pooler in transaction mode (pgbouncer) a client
//! connection is handed a different server connection at every transaction, where those names
//! are unknown or, worse, name another client's statement; and between the two syncs of sqlx's
//! extended protocol (parse, then bind and execute) an idle connection may go back to the
//! pooler too. So behind a pooler ([`Statements::Unnamed`]) every statement is unnamed and
//! every read runs inside a transaction ([`Pool::read`]), which pins one server connection
//! from its first statement to its end. [`Db`] is the executor every query of the backend
//! runs on: it carries the choice, so no call site can forget it.

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgQueryResult, PgRow, PgStatement, PgTypeInfo};
use sqlx::{Describe, Either, Execute, Executor, PgConnection, PgPool, Postgres, Transaction};

/// Whether the pooled connections may keep named prepared statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statements {
    /// Directly connected (or a pooler in session mode): prepared once per connection.
    Named,
    /// Behind a pooler in transaction mode: unnamed, and reads in a transaction.
    Unnamed,
}

/// The pooled connections and how to use them. The pool itself stays inside, so every
/// statement goes through a [`Db`].
#[derive(Debug, Clone)]
pub struct Pool {
    pool: PgPool,
    statements: Statements,
}

impl Pool {
    pub fn new(pool: PgPool, statements: Statements) -> Self {
        Pool { pool, statements }
    }

    pub async fn begin(&self) -> sqlx::Result<PoolTx> {
        Ok(PoolTx {
            tx: self.pool.begin().await?,
            statements: self.statements,
        })
    }

    pub async fn close(&self) {
        self.pool.close().await
    }

    /// A connection for reads: a transaction of its own behind a pooler (rolled back when
    /// dropped, which sqlx sends as the connection goes back to the pool).
    pub async fn read(&self) -> sqlx::Result<Reader> {
        Ok(Reader {
            conn: match self.statements {
                Statements::Named => ReadConn::Plain(self.pool.acquire().await?),
                Statements::Unnamed => ReadConn::InTx(self.pool.begin().await?),
            },
            statements: self.statements,
        })
    }

    pub fn is_closed(&self) -> bool {
        self.pool.is_closed()
    }
}

/// A transaction on a pooled connection (rolled back if dropped uncommitted).
pub struct PoolTx {
    tx: Transaction<'static, Postgres>,
    statements: Statements,
}

impl PoolTx {
    pub fn db(&mut self) -> Db<'_> {
        Db::new(&mut self.tx, self.statements)
    }

    pub async fn commit(self) -> sqlx::Result<()> {
        self.tx.commit().await
    }
}

/// One pooled connection held for a read.
pub struct Reader {
    conn: ReadConn,
    statements: Statements,
}

enum ReadConn {
    Plain(PoolConnection<Postgres>),
    InTx(Transaction<'static, Postgres>),
}

impl Reader {
    pub fn db(&mut self) -> Db<'_> {
        let conn: &mut PgConnection = match &mut self.conn {
            ReadConn::Plain(c) => c,
            ReadConn::InTx(t) => t,
        };
        Db::new(conn, self.statements)
    }
}

/// A connection to run statements on, named or not as [`Statements`] says.
#[derive(Debug)]
pub struct Db<'c> {
    conn: &'c mut PgConnection,
    named: bool,
}

impl<'c> Db<'c> {
    pub fn new(conn: &'c mut PgConnection, statements: Statements) -> Self {
        Db {
            conn,
            named: statements == Statements::Named,
        }
    }

    /// The same connection again, for the next statement of a function that runs several.
    pub fn re(&mut self) -> Db<'_> {
        Db {
            conn: &mut *self.conn,
            named: self.named,
        }
    }
}

/// A query that is prepared under a name only when the connection allows it.
struct Statement<E> {
    query: E,
    named: bool,
}

impl<'q, E: Execute<'q, Postgres>> Execute<'q, Postgres> for Statement<E> {
    fn sql(&self) -> &'q str {
        self.query.sql()
    }

    fn statement(&self) -> Option<&PgStatement<'q>> {
        self.query.statement()
    }

    fn take_arguments(
        &mut self,
    ) -> Result<Option<sqlx::postgres::PgArguments>, sqlx::error::BoxDynError> {
        self.query.take_arguments()
    }

    fn persistent(&self) -> bool {
        self.named && self.query.persistent()
    }
}

impl<'c> Executor<'c> for Db<'c> {
    type Database = Postgres;

    fn fetch_many<'e, 'q, E>(
        self,
        query: E,
    ) -> BoxStream<'e, Result<Either<PgQueryResult, PgRow>, sqlx::Error>>
    where
        'c: 'e,
        E: Execute<'q, Postgres>,
        'q: 'e,
        E: 'q,
    {
        self.conn.fetch_many(Statement {
            query,
            named: self.named,
        })
    }

    fn fetch_optional<'e, 'q, E>(
        self,
        query: E,
    ) -> BoxFuture<'e, Result<Option<PgRow>, sqlx::Error>>
    where
        'c: 'e,
        E: Execute<'q, Postgres>,
        'q: 'e,
        E: 'q,
    {
        self.conn.fetch_optional(Statement {
            query,
            named: self.named,
        })
    }

    fn prepare_with<'e, 'q: 'e>(
        self,
        sql: &'q str,
        parameters: &'e [PgTypeInfo],
    ) -> BoxFuture<'e, Result<PgStatement<'q>, sqlx::Error>>
    where
        'c: 'e,
    {
        self.conn.prepare_with(sql, parameters)
    }

    fn describe<'e, 'q: 'e>(
        self,
        sql: &'q str,
    ) -> BoxFuture<'e, Result<Describe<Postgres>, sqlx::Error>>
    where
        'c: 'e,
    {
        self.conn.describe(sql)
    }
}
