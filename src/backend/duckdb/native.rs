//! The parts of DuckDB's C API the `duckdb` crate does not expose, each behind
//! a small owning type: opening a database with settings the crate cannot
//! pass, a connection of our own beside the crate's, counting the statements
//! of a text with DuckDB's parser, and a prepared statement's type and
//! declared column types. All `unsafe` of the DuckDB backend is here.

use std::ffi::{CStr, CString, c_char, c_void};
use std::ptr;

use duckdb::ffi;

use duckdb::arrow::datatypes::DataType;
use duckdb::types::TimeUnit;

use super::value::DuckType;

/// A DuckDB string the caller must free with `duckdb_free`, as text.
///
/// # Safety
///
/// `raw` is null or a NUL-terminated string DuckDB allocated for the caller.
unsafe fn owned_text(raw: *mut c_char) -> Option<String> {
    if raw.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated, per the caller.
    let text = unsafe { CStr::from_ptr(raw) }.to_string_lossy().into_owned();
    // SAFETY: DuckDB allocated it for us; freed once, here.
    unsafe { ffi::duckdb_free(raw.cast::<c_void>()) };
    Some(text)
}

/// A DuckDB string that stays DuckDB's, as text.
///
/// # Safety
///
/// `raw` is null or a NUL-terminated string that lives as long as this call.
unsafe fn borrowed_text(raw: *const c_char) -> Option<String> {
    if raw.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated, per the caller.
    Some(unsafe { CStr::from_ptr(raw) }.to_string_lossy().into_owned())
}

/// An open DuckDB database (the instance: its buffer pool, threads, catalog).
/// Connections borrow it; it is closed when the last owner drops it, so every
/// [`Session`] holds an `Arc` of it and drops its connections first.
#[derive(Debug)]
pub struct Database {
    raw: ffi::duckdb_database,
}

// SAFETY: a duckdb_database is a thread-safe handle: DuckDB serves connections
// to one database from many threads, and closing it happens once, in Drop.
unsafe impl Send for Database {}
unsafe impl Sync for Database {}

impl Database {
    /// Open `path` (`:memory:` for an in-memory database) with DuckDB
    /// configuration options, applied before anything can run, then run
    /// `then` (settings DuckDB only takes from a started database), before
    /// anything else can.
    pub fn open(path: &str, settings: &[(&str, String)], then: &str) -> Result<Database, String> {
        let c_path = CString::new(path).map_err(|_| "the path contains a NUL byte".to_owned())?;
        let mut config: ffi::duckdb_config = ptr::null_mut();
        // SAFETY: out-pointer to a local; destroyed below on every path.
        if unsafe { ffi::duckdb_create_config(&mut config) } != ffi::DuckDBSuccess {
            return Err("cannot create a DuckDB configuration".to_owned());
        }
        let result = (|| {
            for (name, value) in settings {
                let (c_name, c_value) = (CString::new(*name), CString::new(value.as_str()));
                let (Ok(c_name), Ok(c_value)) = (c_name, c_value) else {
                    return Err(format!("setting {name}: contains a NUL byte"));
                };
                // SAFETY: valid config and NUL-terminated strings DuckDB copies.
                let state = unsafe { ffi::duckdb_set_config(config, c_name.as_ptr(), c_value.as_ptr()) };
                if state != ffi::DuckDBSuccess {
                    return Err(format!("DuckDB refused the setting {name} = '{value}'"));
                }
            }
            let mut raw: ffi::duckdb_database = ptr::null_mut();
            let mut error: *mut c_char = ptr::null_mut();
            // SAFETY: valid path, out-pointers to locals, a valid config.
            let state = unsafe { ffi::duckdb_open_ext(c_path.as_ptr(), &mut raw, config, &mut error) };
            // SAFETY: DuckDB allocated the message (if any) for us.
            let message = unsafe { owned_text(error) };
            if state != ffi::DuckDBSuccess {
                if !raw.is_null() {
                    // SAFETY: a database handle DuckDB gave us; closed once.
                    unsafe { ffi::duckdb_close(&mut raw) };
                }
                return Err(message.unwrap_or_else(|| "DuckDB could not open the database".to_owned()));
            }
            let db = Database { raw };
            if !then.is_empty() {
                // SAFETY: the database outlives this connection, dropped at
                // the end of the block (the crate does not close a database
                // it did not open).
                let conn = unsafe { duckdb::Connection::open_from_raw(db.raw) }.map_err(|e| e.to_string())?;
                conn.execute_batch(then).map_err(|e| e.to_string())?;
            }
            Ok(db)
        })();
        // SAFETY: created above, destroyed once; DuckDB copied what it needs.
        unsafe { ffi::duckdb_destroy_config(&mut config) };
        result
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        // SAFETY: every connection to it was closed before (each Session
        // drops its connections before its Arc of the database).
        unsafe { ffi::duckdb_close(&mut self.raw) };
    }
}

/// One call's connections to a database: the crate's, which runs statements
/// and reads their rows, and a raw one the guard uses to ask DuckDB's parser
/// what a statement is. Fields drop in order: connections before the database.
pub struct Session {
    pub conn: duckdb::Connection,
    raw: RawConnection,
    _db: std::sync::Arc<Database>,
}

impl Session {
    pub fn open(db: &std::sync::Arc<Database>) -> Result<Session, String> {
        // SAFETY: the database outlives the connection: the Session holds an
        // Arc of it and drops `conn` first.
        let conn = unsafe { duckdb::Connection::open_from_raw(db.raw) }.map_err(|e| e.to_string())?;
        let raw = RawConnection::open(db)?;
        Ok(Session {
            conn,
            raw,
            _db: std::sync::Arc::clone(db),
        })
    }

    /// Split `sql` into statements with DuckDB's parser.
    pub fn extract(&self, sql: &str) -> Result<Extracted<'_>, String> {
        let c_sql = CString::new(sql).map_err(|_| "the query contains a NUL byte".to_owned())?;
        let mut raw: ffi::duckdb_extracted_statements = ptr::null_mut();
        // SAFETY: a live connection, a NUL-terminated query, an out-pointer;
        // the result is destroyed by Extracted's Drop, even when empty.
        let count = unsafe { ffi::duckdb_extract_statements(self.raw.raw, c_sql.as_ptr(), &mut raw) };
        let extracted = Extracted {
            raw,
            count: count as usize,
            conn: &self.raw,
        };
        if count == 0 {
            // SAFETY: the message belongs to the extracted statements.
            if let Some(error) = unsafe { borrowed_text(ffi::duckdb_extract_statements_error(raw)) } {
                return Err(error);
            }
        }
        Ok(extracted)
    }
}

struct RawConnection {
    raw: ffi::duckdb_connection,
}

impl RawConnection {
    fn open(db: &Database) -> Result<RawConnection, String> {
        let mut raw: ffi::duckdb_connection = ptr::null_mut();
        // SAFETY: a live database, an out-pointer to a local.
        if unsafe { ffi::duckdb_connect(db.raw, &mut raw) } != ffi::DuckDBSuccess {
            // SAFETY: disconnect accepts what connect left behind.
            unsafe { ffi::duckdb_disconnect(&mut raw) };
            return Err("cannot connect to the DuckDB database".to_owned());
        }
        Ok(RawConnection { raw })
    }
}

impl Drop for RawConnection {
    fn drop(&mut self) {
        // SAFETY: connected in open, disconnected once.
        unsafe { ffi::duckdb_disconnect(&mut self.raw) };
    }
}

// SAFETY: a connection may move between threads; the Session that owns it is
// used by one thread at a time.
unsafe impl Send for RawConnection {}

/// The statements DuckDB's parser found in a text.
pub struct Extracted<'a> {
    raw: ffi::duckdb_extracted_statements,
    pub count: usize,
    conn: &'a RawConnection,
}

impl Extracted<'_> {
    /// Prepare (parse, bind, plan) statement `index` on the raw connection.
    pub fn prepare(&self, index: usize) -> Result<Prepared, String> {
        let mut raw: ffi::duckdb_prepared_statement = ptr::null_mut();
        // SAFETY: live connection and extracted statements, in-range index
        // (callers check `count`), an out-pointer; destroyed by Prepared.
        let state = unsafe { ffi::duckdb_prepare_extracted_statement(self.conn.raw, self.raw, index as u64, &mut raw) };
        let prepared = Prepared { raw };
        if state != ffi::DuckDBSuccess {
            // SAFETY: the message belongs to the prepared statement.
            let error = unsafe { borrowed_text(ffi::duckdb_prepare_error(raw)) };
            return Err(error.unwrap_or_else(|| "DuckDB could not prepare the statement".to_owned()));
        }
        Ok(prepared)
    }
}

impl Drop for Extracted<'_> {
    fn drop(&mut self) {
        // SAFETY: created by duckdb_extract_statements, destroyed once.
        unsafe { ffi::duckdb_destroy_extracted(&mut self.raw) };
    }
}

/// A statement DuckDB prepared: what it is, its parameters, its columns.
pub struct Prepared {
    raw: ffi::duckdb_prepared_statement,
}

impl Prepared {
    /// DuckDB's `duckdb_statement_type`.
    pub fn kind(&self) -> u32 {
        // SAFETY: a successfully prepared statement.
        unsafe { ffi::duckdb_prepared_statement_type(self.raw) as u32 }
    }

    pub fn param_count(&self) -> usize {
        // SAFETY: as above.
        unsafe { ffi::duckdb_nparams(self.raw) as usize }
    }

    /// The name of each result column, in order.
    pub fn column_names(&self) -> Vec<String> {
        // SAFETY: a successfully prepared statement.
        let count = unsafe { ffi::duckdb_prepared_statement_column_count(self.raw) };
        (0..count)
            .map(|i| {
                // SAFETY: in-range index; the name is ours to free.
                let name = unsafe { ffi::duckdb_prepared_statement_column_name(self.raw, i) };
                unsafe { owned_text(name.cast_mut()) }.unwrap_or_default()
            })
            .collect()
    }

    /// The declared type of each result column, in order.
    pub fn column_types(&self) -> Vec<DuckType> {
        // SAFETY: as above.
        let count = unsafe { ffi::duckdb_prepared_statement_column_count(self.raw) };
        (0..count)
            .map(|i| {
                // SAFETY: in-range index; the type is ours to destroy.
                let mut ty = unsafe { ffi::duckdb_prepared_statement_column_logical_type(self.raw, i) };
                if ty.is_null() {
                    return DuckType::Other(String::new());
                }
                // SAFETY: a valid logical type, destroyed once right after.
                let out = unsafe { describe(ty) };
                unsafe { ffi::duckdb_destroy_logical_type(&mut ty) };
                out
            })
            .collect()
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        // SAFETY: destroy accepts a failed preparation too; destroyed once.
        unsafe { ffi::duckdb_destroy_prepare(&mut self.raw) };
    }
}

/// A logical type as a [`DuckType`].
///
/// # Safety
///
/// `ty` is a valid logical type; it stays the caller's.
unsafe fn describe(ty: ffi::duckdb_logical_type) -> DuckType {
    // SAFETY: (for every call below) a valid logical type, and children and
    // strings DuckDB hands us are destroyed or freed once.
    unsafe {
        let base = describe_base(ty);
        match owned_text(ffi::duckdb_logical_type_get_alias(ty)) {
            Some(alias) => DuckType::Alias(alias, Box::new(base)),
            None => base,
        }
    }
}

/// # Safety
///
/// As [`describe`].
unsafe fn describe_base(ty: ffi::duckdb_logical_type) -> DuckType {
    let child = |mut raw: ffi::duckdb_logical_type| -> DuckType {
        if raw.is_null() {
            return DuckType::Other(String::new());
        }
        // SAFETY: a child type DuckDB created for us, destroyed once.
        unsafe {
            let out = describe(raw);
            ffi::duckdb_destroy_logical_type(&mut raw);
            out
        }
    };
    // SAFETY: a valid logical type, per the caller.
    let id = unsafe { ffi::duckdb_get_type_id(ty) };
    // SAFETY: each accessor is called only for the type ids it applies to.
    unsafe {
        match id {
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN => DuckType::Boolean,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_TINYINT => DuckType::TinyInt,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_SMALLINT => DuckType::SmallInt,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_INTEGER => DuckType::Integer,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT => DuckType::BigInt,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_UTINYINT => DuckType::UTinyInt,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_USMALLINT => DuckType::USmallInt,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_UINTEGER => DuckType::UInteger,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_UBIGINT => DuckType::UBigInt,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_HUGEINT => DuckType::HugeInt,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_UHUGEINT => DuckType::UHugeInt,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_FLOAT => DuckType::Float,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_DOUBLE => DuckType::Double,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_DECIMAL => DuckType::Decimal {
                width: ffi::duckdb_decimal_width(ty),
                scale: ffi::duckdb_decimal_scale(ty),
            },
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_DATE => DuckType::Date,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIME => DuckType::Time,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIME_NS => DuckType::TimeNs,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIME_TZ => DuckType::TimeTz,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP => DuckType::Timestamp(TimeUnit::Microsecond),
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_S => DuckType::Timestamp(TimeUnit::Second),
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_MS => DuckType::Timestamp(TimeUnit::Millisecond),
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_NS => DuckType::Timestamp(TimeUnit::Nanosecond),
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_TZ => DuckType::TimestampTz,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_INTERVAL => DuckType::Interval,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR => DuckType::Varchar,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_BLOB => DuckType::Blob,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_UUID => DuckType::Uuid,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIT => DuckType::Bit,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGNUM => DuckType::Bignum,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_SQLNULL => DuckType::Null,
            // A statement whose parameters decide its result's types.
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_INVALID => DuckType::Unknown,
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_ENUM => {
                let size = ffi::duckdb_enum_dictionary_size(ty);
                DuckType::Enum(
                    (0..u64::from(size))
                        .map(|i| owned_text(ffi::duckdb_enum_dictionary_value(ty, i)).unwrap_or_default())
                        .collect(),
                )
            }
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_LIST => DuckType::List(Box::new(child(ffi::duckdb_list_type_child_type(ty)))),
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_ARRAY => DuckType::Array(
                Box::new(child(ffi::duckdb_array_type_child_type(ty))),
                ffi::duckdb_array_type_array_size(ty),
            ),
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_MAP => DuckType::Map(
                Box::new(child(ffi::duckdb_map_type_key_type(ty))),
                Box::new(child(ffi::duckdb_map_type_value_type(ty))),
            ),
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_STRUCT => {
                let count = ffi::duckdb_struct_type_child_count(ty);
                DuckType::Struct(
                    (0..count)
                        .map(|i| {
                            let name = owned_text(ffi::duckdb_struct_type_child_name(ty, i)).unwrap_or_default();
                            (name, child(ffi::duckdb_struct_type_child_type(ty, i)))
                        })
                        .collect(),
                )
            }
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_UNION => {
                let count = ffi::duckdb_union_type_member_count(ty);
                DuckType::Union(
                    (0..count)
                        .map(|i| {
                            let name = owned_text(ffi::duckdb_union_type_member_name(ty, i)).unwrap_or_default();
                            (name, child(ffi::duckdb_union_type_member_type(ty, i)))
                        })
                        .collect(),
                )
            }
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_GEOMETRY => DuckType::Other("GEOMETRY".to_owned()),
            ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARIANT => DuckType::Other("VARIANT".to_owned()),
            other => DuckType::Other(format!("type {other}")),
        }
    }
}

/// A result column's type as the `duckdb` crate reports it after the
/// statement ran, for statements whose types were not known before (their
/// parameters decide them). The crate does not expose an `ARRAY`'s size or
/// an `ENUM`'s labels: the size comes from the Arrow type, the labels are
/// left out.
pub fn describe_handle(handle: &duckdb::core::LogicalTypeHandle, arrow: &DataType) -> DuckType {
    use duckdb::core::LogicalTypeId as Id;
    let base = match handle.id() {
        Id::Boolean => DuckType::Boolean,
        Id::Tinyint => DuckType::TinyInt,
        Id::Smallint => DuckType::SmallInt,
        Id::Integer => DuckType::Integer,
        Id::Bigint => DuckType::BigInt,
        Id::UTinyint => DuckType::UTinyInt,
        Id::USmallint => DuckType::USmallInt,
        Id::UInteger => DuckType::UInteger,
        Id::UBigint => DuckType::UBigInt,
        Id::Hugeint => DuckType::HugeInt,
        Id::UHugeint => DuckType::UHugeInt,
        Id::Float => DuckType::Float,
        Id::Double => DuckType::Double,
        Id::Decimal => DuckType::Decimal {
            width: handle.decimal_width(),
            scale: handle.decimal_scale(),
        },
        Id::Date => DuckType::Date,
        Id::Time => DuckType::Time,
        Id::TimeNs => DuckType::TimeNs,
        Id::TimeTZ => DuckType::TimeTz,
        Id::Timestamp => DuckType::Timestamp(TimeUnit::Microsecond),
        Id::TimestampS => DuckType::Timestamp(TimeUnit::Second),
        Id::TimestampMs => DuckType::Timestamp(TimeUnit::Millisecond),
        Id::TimestampNs => DuckType::Timestamp(TimeUnit::Nanosecond),
        Id::TimestampTZ => DuckType::TimestampTz,
        Id::Interval => DuckType::Interval,
        Id::Varchar => DuckType::Varchar,
        Id::Blob => DuckType::Blob,
        Id::Uuid => DuckType::Uuid,
        Id::Bit => DuckType::Bit,
        Id::Bignum => DuckType::Bignum,
        Id::SqlNull => DuckType::Null,
        Id::Enum => DuckType::Enum(Vec::new()),
        Id::List => DuckType::List(Box::new(describe_handle(&handle.child(0), child_arrow(arrow, 0)))),
        Id::Array => {
            let size = match arrow {
                DataType::FixedSizeList(_, size) => u64::try_from(*size).unwrap_or_default(),
                _ => 0,
            };
            DuckType::Array(Box::new(describe_handle(&handle.child(0), child_arrow(arrow, 0))), size)
        }
        Id::Map => DuckType::Map(
            Box::new(describe_handle(&handle.child(0), child_arrow(arrow, 0))),
            Box::new(describe_handle(&handle.child(1), child_arrow(arrow, 1))),
        ),
        Id::Struct | Id::Union => {
            let fields = (0..handle.num_children())
                .map(|i| {
                    (
                        handle.child_name(i),
                        describe_handle(&handle.child(i), child_arrow(arrow, i)),
                    )
                })
                .collect();
            if handle.id() == Id::Struct {
                DuckType::Struct(fields)
            } else {
                DuckType::Union(fields)
            }
        }
        other => DuckType::Other(format!("{other:?}").to_uppercase()),
    };
    match handle.get_alias() {
        Some(alias) => DuckType::Alias(alias, Box::new(base)),
        None => base,
    }
}

/// The Arrow type of child `i` (a list's items, a map's key or value, a
/// struct's field); `Null` when there is none.
fn child_arrow(arrow: &DataType, i: usize) -> &DataType {
    match arrow {
        DataType::List(field) | DataType::LargeList(field) | DataType::FixedSizeList(field, _) => field.data_type(),
        DataType::Struct(fields) => fields.get(i).map_or(&DataType::Null, |f| f.data_type()),
        DataType::Map(entries, _) => child_arrow(entries.data_type(), i),
        DataType::Union(fields, _) => fields.iter().nth(i).map_or(&DataType::Null, |(_, f)| f.data_type()),
        _ => &DataType::Null,
    }
}
