//! Placeholder: the 'fba' scheme is being implemented (issue 4). Replace this whole file.

use super::{BmContext, BufferManager, Params};

pub fn build(_p: &Params, _ctx: &BmContext) -> Result<Box<dyn BufferManager>, String> {
    Err("switch.bm.scheme = 'fba': not implemented yet".into())
}
