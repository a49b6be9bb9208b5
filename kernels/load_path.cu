// load_path.cu: placeholder
