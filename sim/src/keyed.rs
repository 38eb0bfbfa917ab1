//! The keyed limiter in the simulator: scenarios whose callers are drawn over keys, and the
//! limiters driven on them, `fixed_window::KeyedRateLimiter` and the catalogue's planted keyed
//! ones, each behind the same [`Subject`](crate::Subject) as the plain limiter, so that the
//! same event loop drives their own blocking and asynchronous paths and the same oracle judges
//! them, key by key.

mod planted;
pub(crate) use self::planted::PlantedKeyed;
mod population;
pub use self::population::Population;
mod subject;
pub(crate) use self::subject::KeyedSubject;
