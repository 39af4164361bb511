fn main() {
    let base = std::path::PathBuf::from(std::env::args().nth(1).unwrap());
    let b = base.join("b"); let m = base.join("m");
    std::fs::create_dir_all(&b).unwrap(); std::fs::create_dir_all(&m).unwrap();
    println!("probe: {:?}", tern_statefs::probe());
    let fs = tern_statefs::mount(&b, &m).unwrap();
    std::fs::write(m.join("a"), b"hello").unwrap();
    println!("read: {:?}", std::fs::read(m.join("a")));
    println!("ls: {:?}", std::fs::read_dir(&m).unwrap().map(|e| e.unwrap().file_name()).collect::<Vec<_>>());
    println!("ops: {}", fs.mutating_ops());
    let lost = fs.power_loss(tern_statefs::Cut::Clean).unwrap();
    println!("lost: {lost:?}");
    println!("ls: {:?}", std::fs::read_dir(&m).unwrap().map(|e| e.unwrap().file_name()).collect::<Vec<_>>());
    drop(fs);
    println!("after drop ls m: {:?}", std::fs::read_dir(&m).unwrap().count());
}
